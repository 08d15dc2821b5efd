//! dj-fusion: Data-Juicer recipes on Apache DataFusion.
//!
//! The recipe model, compiler and plan nodes live in `dj-plans`, the operators in `dj-udfs`; this
//! crate runs jobs (`run`), writes results in Data-Juicer's formats (`export`), explains plans
//! (`explain`) and holds the binaries' flags (`flags`) and entry points (`cli`). Its modules are
//! private: the binaries' entry points and [`run()`] (for the integration tests) are its whole
//! interface, so the compiler reports what nothing uses.

#![warn(unreachable_pub)]

mod analyze;
mod autosize;
mod cli;
mod cluster;
mod explain;
mod export;
mod filter_probe;
mod flags;
mod job;
mod jobtools;
mod logging;
mod options;
mod partition;
mod plan;
mod report;
mod run;
mod sql;

pub use cli::{analyze_main, cluster_main, plan_main, run_main};
pub use job::checkpoints::Quarantined;
pub use jobtools::job_main;
pub use options::{RunObserver, RunOptions};
pub use report::{JobReport, OpReport, RunReport};
pub use run::run;
pub use sql::sql_main;

/// mimalloc: the operators and the JSON reader allocate many small strings and values, often
/// freed on another thread than the one that made them (glibc's arenas contend there).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// For a batch run: mimalloc keeps the memory it frees for 1 s before returning it to the OS
/// (its v3 default; v2's is 10 ms), so that batch-sized buffers freed and allocated again within a
/// run are not faulted back in as fresh pages the kernel must zero. From `8b74d87` to stop 48 it
/// was kept for ever (minor faults on a long-text cleaning run then fell from 21-31K to 2.4K);
/// memory one phase of a run freed then stayed committed through the next. Today's runs take
/// about 80K faults either way, and 1 s gives peak RSS 5-7% lower at the same speed
/// (benches/RESULTS.md, stop 49). Not for the long-lived cluster processes, which keep
/// mimalloc's own setting.
pub(crate) fn keep_freed_memory() {
    /// `mi_option_purge_delay` (its position in mimalloc's option enum, v2 and v3).
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: sets an option; mimalloc reads options at any time.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, KEEP_FREED_MS) };
}

/// How long a batch run keeps memory it frees, in milliseconds (see [`keep_freed_memory`]).
const KEEP_FREED_MS: std::ffi::c_long = 1000;

/// `mi_option_arena_eager_commit` (its position in mimalloc's option enum, v2 and v3).
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// mimalloc commits its arenas as they are used rather than all at once (its default on Linux
/// commits a whole arena up front, which transparent huge pages then back in 2 MB pages as soon
/// as anything in them is touched): peak RSS 8-20% lower on long and short documents alike, less
/// system time, the same speed (benches/RESULTS.md). mimalloc reads the option when it reserves
/// its first arena, at the first allocation, so it is set before `main`, from `.init_array`.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static COMMIT_ARENAS_ON_DEMAND: extern "C" fn() = {
    extern "C" fn commit_arenas_on_demand() {
        // An explicit MIMALLOC_ARENA_EAGER_COMMIT wins. `getenv`, not `std::env`, which would
        // allocate, and so reserve the first arena before the option is set.
        // SAFETY: a NUL-terminated name; no thread changes the environment before `main`.
        let unset = unsafe { libc::getenv(c"MIMALLOC_ARENA_EAGER_COMMIT".as_ptr()).is_null() };
        if unset {
            // SAFETY: sets an option; mimalloc reads options at any time.
            unsafe { libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0) };
        }
    }
    commit_arenas_on_demand
};

#[cfg(test)]
mod allocator_tests {
    /// Option 15 is the purge delay: its default is 1 s in mimalloc v3 (10 ms in v2), and it
    /// takes -1. Option 4 is arena eager commit, 0 from before `main` on Linux.
    #[test]
    fn options_15_and_4_are_the_purge_delay_and_arena_eager_commit() {
        // SAFETY: reads options.
        let (delay, eager) = unsafe {
            (
                libmimalloc_sys::mi_option_get(15),
                libmimalloc_sys::mi_option_get(4),
            )
        };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert!([10, 1000].contains(&delay), "{delay}");
        }
        // Set before `main` (see COMMIT_ARENAS_ON_DEMAND).
        if cfg!(target_os = "linux") && std::env::var_os("MIMALLOC_ARENA_EAGER_COMMIT").is_none() {
            assert_eq!(eager, 0);
        }
        super::keep_freed_memory();
        // SAFETY: reads an option.
        assert_eq!(
            unsafe { libmimalloc_sys::mi_option_get(15) },
            super::KEEP_FREED_MS
        );
    }
}
