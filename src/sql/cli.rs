//! The `dj-sql` command: flags, one-shot queries and the statement prompt.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Parser;

use super::paths::file_name;
use super::{JobSql, OutputFormat, format_result, split_statements};

/// Query a partitioned job's checkpoints, export, event log and input with SQL.
#[derive(Debug, Parser)]
#[command(
    name = "dj-sql",
    version,
    after_help = "Tables: checkpoint_op_XXXX_partition_YYYY (each checkpoint), checkpoint_op_XXXX \
(UNION ALL of an op's partitions), export, export_stats, events, input, input_partition_YYYY. \
Struct fields: get_field(__dj__stats__, 'text_len'). Without a query: statements from stdin, each \
ended by ';'; \\d lists tables, \\d NAME shows columns, \\q quits."
)]
pub(super) struct SqlFlags {
    /// The directory holding the job directories (the recipe's work_dir).
    #[arg(long = "work_dir", alias = "work-dir", default_value = ".")]
    pub work_dir: PathBuf,
    /// The job id (a directory under --work_dir).
    pub job_id: String,
    /// SQL to run (statements separated by ';'); without it, an interactive prompt.
    pub query: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

/// `dj-sql`.
pub fn sql_main() -> ExitCode {
    let flags = SqlFlags::parse();
    match sql_cmd(&flags) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn sql_cmd(flags: &SqlFlags) -> Result<bool> {
    crate::job::validate_job_id(&flags.job_id)?;
    let dir = match flags
        .work_dir
        .to_str()
        .filter(|w| dj_plans::store::is_remote(w))
    {
        // A job on object storage: its files (checkpoints included) fetched into a local view.
        Some(url) => crate::job::mirror::job_view(url, &flags.job_id, true)?,
        None => flags.work_dir.join(&flags.job_id),
    };
    if !dir.is_dir() {
        bail!(
            "Job directory not found: {} (--work_dir is the directory holding job directories)",
            dir.display()
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let job = JobSql::open(&dir).await?;
        for w in &job.warnings {
            eprintln!("warning: {w}");
        }
        match &flags.query {
            Some(q) => {
                let (mut stmts, rest) = split_statements(q);
                if !rest.trim().is_empty() {
                    stmts.push(rest.trim().to_string());
                }
                if stmts.is_empty() {
                    bail!("the query is empty");
                }
                let mut out = std::io::stdout().lock();
                for s in &stmts {
                    let r = job.query(s).await?;
                    if !r.schema.fields().is_empty() {
                        out.write_all(format_result(&r, flags.format)?.as_bytes())?;
                    }
                }
                Ok(true)
            }
            None => repl(&job, flags.format).await,
        }
    })
}

/// Statements from stdin, line by line; `Ok(false)` if any failed.
async fn repl(job: &JobSql, format: OutputFormat) -> Result<bool> {
    let tty = std::io::stdin().is_terminal();
    let prompt = |continued: bool| {
        if tty {
            print!("{}", if continued { "   ...> " } else { "dj-sql> " });
            let _ = std::io::stdout().flush();
        }
    };
    if tty {
        println!(
            "dj-sql: job {} ({} tables). End statements with ';'. \\d lists tables, \\d NAME shows columns, \\q quits.",
            file_name(&job.job_dir),
            job.tables.len()
        );
    }
    let mut ok = true;
    let mut buf = String::new();
    prompt(false);
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let mut command = line
            .trim()
            .starts_with('\\')
            .then(|| line.trim().to_string());
        if command.is_none() {
            buf.push_str(&line);
            buf.push('\n');
            let (stmts, rest) = split_statements(&buf);
            buf = rest;
            for s in stmts {
                ok &= run_printed(job, &s, format, tty).await;
            }
            // A command after the last ';' of the line.
            if buf.trim().starts_with('\\') {
                command = Some(std::mem::take(&mut buf).trim().to_string());
            }
        }
        if let Some(cmd) = command {
            match backslash(job, &cmd).await {
                Some(done) => ok &= done,
                None => return Ok(ok),
            }
        }
        prompt(!buf.trim().is_empty());
    }
    // A last statement without its ';' (piped input).
    if !buf.trim().is_empty() {
        ok &= run_printed(job, buf.trim(), format, tty).await;
    }
    if tty {
        println!();
    }
    Ok(ok)
}

/// A `\` command: `None` for `\q`, else whether it succeeded.
async fn backslash(job: &JobSql, cmd: &str) -> Option<bool> {
    let (name, arg) = cmd.split_once(char::is_whitespace).unwrap_or((cmd, ""));
    match (name, arg.trim().trim_end_matches(';')) {
        ("\\q", _) => return None,
        ("\\d", "") => print!("{}", job.describe_tables()),
        ("\\d", table) => match job.describe_table(table).await {
            Ok(s) => print!("{s}"),
            Err(e) => {
                eprintln!("error: {e:#}");
                return Some(false);
            }
        },
        ("\\?" | "\\h" | "\\help", _) => println!(
            "End SQL statements with ';'. \\d lists tables, \\d NAME shows a table's columns, \\q quits."
        ),
        _ => {
            eprintln!("error: unknown command {name} (\\d, \\d NAME, \\q)");
            return Some(false);
        }
    }
    let _ = std::io::stdout().flush();
    Some(true)
}

async fn run_printed(job: &JobSql, sql: &str, format: OutputFormat, tty: bool) -> bool {
    let result = async {
        let r = job.query(sql).await?;
        let mut text = String::new();
        if !r.schema.fields().is_empty() {
            text = format_result(&r, format)?;
            if format == OutputFormat::Table && tty {
                let n = r.num_rows();
                text.push_str(&format!("({n} row{})\n", if n == 1 { "" } else { "s" }));
            }
        }
        anyhow::Ok(text)
    }
    .await;
    match result {
        Ok(text) => {
            print!("{text}");
            let _ = std::io::stdout().flush();
            true
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            false
        }
    }
}
