//! Nothing lost, nothing silently wrong: a completed job is validated before "nothing to do",
//! every saved file is checked against its seal before a resume uses it (failed ones are moved
//! aside and the partition falls back), and a full filesystem during any write leaves a job
//! that resumes, once space is freed, to the uninterrupted export.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::ok;
use crate::resume::{Job, events, fails_with, forget_completion, fresh, partition_ops};

#[test]
fn a_completed_job_is_validated_before_nothing_to_do() {
    let job = Job::new();
    let (id, want) = fresh(&job);
    let out = ok(&job.run(&["--resume", &id]));
    assert!(
        out.contains("is already completed - nothing to do"),
        "{out}"
    );
    let before = job.checkpoints(&id);

    // One character of row 5 edited: same row count, other content.
    let data = job.path("data.jsonl");
    let original = std::fs::read_to_string(&data).unwrap();
    let mut lines: Vec<String> = original.lines().map(str::to_string).collect();
    let at = lines[4].find("\"text\": \"").unwrap() + 10;
    let c = lines[4].as_bytes()[at];
    let other = if c == b'x' { "y" } else { "x" };
    lines[4].replace_range(at..at + 1, other);
    std::fs::write(&data, lines.join("\n") + "\n").unwrap();
    fails_with(
        &job.run(&["--resume", &id]),
        "Saved partition content hashes do not match the current input",
    );
    fails_with(&job.run(&["--resume", &id]), "partition 0 (rows [0, 42))");
    // The recipe is checked as well.
    std::fs::write(&data, &original).unwrap();
    let recipe = std::fs::read_to_string(job.recipe()).unwrap();
    std::fs::write(job.recipe(), recipe.replace("min_num: 3", "min_num: 4")).unwrap();
    fails_with(&job.run(&["--resume", &id]), "Config validation failed");
    std::fs::write(job.recipe(), &recipe).unwrap();
    assert!(job.checkpoints(&id) == before, "checkpoints changed");
    assert_eq!(job.export(), want);
    let out = ok(&job.run(&["--resume", &id]));
    assert!(
        out.contains("is already completed - nothing to do"),
        "{out}"
    );
}

/// Changes one byte in the middle of `path` into another valid-looking one (a lowercase ASCII
/// letter into uppercase, as a flipped bit would), so only a checksum can tell.
fn flip_a_byte(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let mid = bytes.len() / 2;
    let at = (mid..bytes.len())
        .chain(0..mid)
        .find(|&i| bytes[i].is_ascii_lowercase())
        .unwrap_or(mid);
    bytes[at] ^= 0x20;
    std::fs::write(path, bytes).unwrap();
}

fn checkpoint(job: &Job, id: &str, op: usize, p: usize, ext: &str) -> PathBuf {
    job.job_dir(id).join(format!(
        "checkpoints/checkpoint_op_{op:04}_partition_{p:04}.{ext}"
    ))
}

/// Corrupted checkpoints and key files, in every storage format: each is moved aside (never
/// deleted) with a warning, an event and a line in `dj-job monitor --detailed`; each partition
/// falls back to its newest valid checkpoint or its input; the export is the uninterrupted one.
#[test]
fn corrupt_saved_files_are_moved_aside_and_the_resume_falls_back() {
    let reference = Job::new();
    let (_, want) = fresh(&reference);
    for (format, compression, ext) in [
        ("parquet", "snappy", "parquet"),
        ("parquet", "none", "parquet"),
        ("jsonl", "none", "jsonl"),
        ("arrow", "none", "arrow"),
    ] {
        let job = Job::new();
        let id = format!("corrupt_{format}_{compression}");
        let args = [
            "--job_id",
            id.as_str(),
            "--intermediate_storage.format",
            format,
            "--intermediate_storage.compression",
            compression,
        ];
        ok(&job.run(&args));
        let dir = job.job_dir(&id);
        forget_completion(&dir);
        std::fs::remove_file(job.path("out/result.jsonl")).unwrap();
        let ck = dir.join("checkpoints");
        // Partition 0: its newest checkpoint has a changed byte. Partition 1: its newest
        // checkpoint lost its seal. Partition 2: its dedup keys changed, so nothing after the
        // dedup (op 2) is usable. Partition 3: every checkpoint changed.
        flip_a_byte(&checkpoint(&job, &id, 3, 0, ext));
        let unsealed = checkpoint(&job, &id, 3, 1, ext);
        std::fs::remove_file(format!("{}.blake3", unsealed.display())).unwrap();
        flip_a_byte(&ck.join("dedup_keys_op_0002_partition_0002.bin"));
        for op in 0..4 {
            flip_a_byte(&checkpoint(&job, &id, op, 3, ext));
        }
        let damaged: Vec<(PathBuf, Vec<u8>)> = [
            checkpoint(&job, &id, 3, 0, ext),
            unsealed.clone(),
            ck.join("dedup_keys_op_0002_partition_0002.bin"),
        ]
        .into_iter()
        .chain((0..4).map(|op| checkpoint(&job, &id, op, 3, ext)))
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();

        let mut resume = vec!["--resume", id.as_str()];
        resume.extend_from_slice(&args[2..]);
        let out = job.run(&resume);
        ok(&out);
        let what = format!("{format}/{compression}");
        assert_eq!(job.export(), want, "{what}: export after resume");
        assert_eq!(
            partition_ops(&dir, "checkpoint_load"),
            [(0, 2), (1, 2), (2, 1)],
            "{what}"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        let invalid: Vec<serde_json::Value> = events(&dir)
            .into_iter()
            .filter(|e| e["event_type"] == "checkpoint_invalid")
            .collect();
        assert_eq!(invalid.len(), damaged.len(), "{what}: {invalid:?}");
        for (path, bytes) in &damaged {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            // Either gone, or written anew (and sealed) by the resumed partition.
            if let Ok(now) = std::fs::read(path) {
                let seal: serde_json::Value = serde_json::from_slice(
                    &std::fs::read(format!("{}.blake3", path.display())).unwrap(),
                )
                .unwrap();
                assert_eq!(
                    seal["blake3"],
                    blake3::hash(&now).to_hex().to_string(),
                    "{what}: {name} in place does not verify"
                );
            }
            let moved = ck.join("corrupt").join(&name);
            assert_eq!(
                &std::fs::read(&moved).unwrap(),
                bytes,
                "{what}: {name} moved aside unchanged"
            );
            assert!(
                stderr.contains(&format!("{} failed verification", path.display())),
                "{stderr}"
            );
            let e = invalid
                .iter()
                .find(|e| e["checkpoint_path"] == path.display().to_string())
                .unwrap_or_else(|| panic!("{what}: no event names {name}"));
            assert_eq!(
                e["metadata"]["moved_to"],
                moved.display().to_string(),
                "{what}"
            );
        }
        assert!(
            stderr.contains("no checksum record") && stderr.contains("BLAKE3"),
            "{stderr}"
        );
        let monitor = Command::new(env!("CARGO_BIN_EXE_dj-job"))
            .args(["--work_dir", job.path("jobs").to_str().unwrap()])
            .args(["monitor", &id, "--detailed"])
            .output()
            .unwrap();
        let shown = ok(&monitor);
        assert!(
            shown.contains("MOVED ASIDE")
                && shown.contains("dedup_keys_op_0002_partition_0002.bin"),
            "{shown}"
        );
        // The resumed job wrote sealed files again; a second resume has nothing to move aside.
        forget_completion(&dir);
        let again = job.run(&resume);
        ok(&again);
        assert!(
            !String::from_utf8_lossy(&again.stderr).contains("failed verification"),
            "{}",
            String::from_utf8_lossy(&again.stderr)
        );
        assert_eq!(job.export(), want, "{what}: second resume");
    }
}

/// A size-limited tmpfs mounted for one test, unmounted when dropped.
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    /// `None` (the test is skipped) where mounting is not allowed.
    fn mount(size: &str) -> Option<SmallFs> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match mounted {
            Ok(o) if o.status.success() => Some(SmallFs { dir }),
            other => {
                eprintln!(
                    "skipped: cannot mount a small tmpfs (needs root): {:?}",
                    other.map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
                );
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the filesystem until only `free` bytes are left.
    fn fill_leaving(&self, free: u64) {
        let path = self.path().join("filler");
        let mut f = std::fs::File::create(&path).unwrap();
        let chunk = vec![0u8; 64 << 10];
        let mut written = 0u64;
        loop {
            match f.write(&chunk) {
                Ok(0) => break,
                Ok(n) => written += n as u64,
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => panic!("filling {}: {e}", path.display()),
            }
        }
        f.set_len(written.saturating_sub(free)).unwrap();
        f.sync_all().unwrap();
    }

    fn free_space(&self) {
        let _ = std::fs::remove_file(self.path().join("filler"));
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// Where the full filesystem is in a storage-fault run.
#[derive(Debug, Clone, Copy)]
enum Full {
    /// The job directory: checkpoints, seals, key files, metadata, events.
    WorkDir,
    /// `TMPDIR`: the deduplicator's spill files.
    Spill,
    /// The export's directory: staging files and the export.
    Export,
}

/// A full filesystem during a checkpoint, a seal, a dedup spill, a staging file or the export,
/// at many amounts of free space: the run fails with an error naming the path and "No space
/// left on device", no half-written file is read back, and once space is freed `--resume`
/// (or, for a job that failed before saving its configuration, the same command again) gives
/// the uninterrupted export.
#[test]
fn a_full_filesystem_leaves_a_resumable_job() {
    let Some(small) = SmallFs::mount("2m") else {
        return;
    };
    let reference = Job::new();
    let (_, want) = fresh(&reference);
    let mut faults = 0;
    let mut strict_resumes = 0;
    for full in [Full::WorkDir, Full::Spill, Full::Export] {
        let mut succeeded = false;
        for (i, free_kb) in [
            0u64, 4, 8, 16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 256, 320, 384, 512,
        ]
        .into_iter()
        .enumerate()
        {
            let job = Job::new();
            let base = small.path().join(format!("{full:?}_{i}"));
            std::fs::create_dir_all(&base).unwrap();
            let id = format!("full_{i}");
            let mut args = vec!["--job_id".to_string(), id.clone()];
            let export = base.join("out/result.jsonl");
            let work = base.join("jobs");
            match full {
                Full::WorkDir => args.extend(["--work_dir".into(), work.display().to_string()]),
                Full::Export => args.extend(["--export_path".into(), export.display().to_string()]),
                Full::Spill => {}
            }
            let job_dir = match full {
                Full::WorkDir => work.join(&id),
                _ => job.job_dir(&id),
            };
            let exported = || match full {
                Full::Export => std::fs::read_to_string(&export).unwrap(),
                _ => job.export(),
            };
            let run = |extra: &[String]| {
                let mut c = job.command(&extra.iter().map(String::as_str).collect::<Vec<_>>());
                c.env(
                    "TMPDIR",
                    if matches!(full, Full::Spill) {
                        &base
                    } else {
                        Path::new("/tmp")
                    },
                );
                c.output().unwrap()
            };
            small.fill_leaving(free_kb << 10);
            let out = run(&args);
            small.free_space();
            if out.status.success() {
                assert_eq!(exported(), want, "{full:?} with {free_kb} KiB free");
                succeeded = true;
                break;
            }
            faults += 1;
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("No space left on device") && err.contains(base.to_str().unwrap()),
                "{full:?} with {free_kb} KiB free: the error names neither the fault nor the path:\n{err}"
            );
            eprintln!(
                "{full:?}, {free_kb} KiB free: {}",
                err.lines().last().unwrap_or_default()
            );
            // The job's metadata and every saved file are whole, or absent.
            if job_dir.join("checkpoints").is_dir() {
                for entry in std::fs::read_dir(job_dir.join("checkpoints")).unwrap() {
                    let name = entry.unwrap().file_name().to_string_lossy().into_owned();
                    assert!(
                        !name.contains(".tmp-"),
                        "{full:?}: temporary {name} left behind"
                    );
                }
            }
            let saved_config = job_dir.join("recipe.yaml").is_file()
                && job_dir.join("checkpoints/partitioning_info.json").is_file();
            let mut again = args.clone();
            if saved_config {
                again[0] = "--resume".into();
                strict_resumes += 1;
            }
            let out = run(&again);
            assert!(
                out.status.success(),
                "{full:?} with {free_kb} KiB free: {} after freeing space failed:\n{}",
                again[0],
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                exported(),
                want,
                "{full:?} with {free_kb} KiB free: after {}",
                again[0]
            );
            let _ = std::fs::remove_dir_all(&base);
        }
        assert!(succeeded, "{full:?}: no amount of free space was enough");
    }
    assert!(faults >= 6, "only {faults} faults were hit");
    assert!(strict_resumes >= 3, "only {strict_resumes} strict resumes");
    eprintln!("{faults} storage faults injected, {strict_resumes} resumed strictly");
}
