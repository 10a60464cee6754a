//! Thread priorities: the threads that announce deadlines may run real-time
//! (`--realtime-priority`), the runtime's workers ahead of other processes
//! (`--worker-nice`); the store's writer yields to everything else.
//!
//! Why real-time: on a machine whose cores are busy (thousands of sockets, the load on
//! the same cores), a thread woken at a deadline waits for the kernel to give it a core
//! (less with a lower nice value, but still): at 18,000 sockets on 2 cores that wait was the whole of the
//! timers' late tail (BENCHMARKS.md). A `SCHED_FIFO` thread takes a core as soon as it is
//! woken. The threads that get it do little work (the alarm thread wakes tasks and runs
//! the games that are due, at most 2 ms in 10: `alarm::direct`; the games' threads run
//! game logic), and the kernel still keeps 5% of every second for the others
//! (`sched_rt_runtime_us`).

use std::io;

/// Runs the calling thread under `SCHED_FIFO` at `priority` (1-99).
pub fn realtime(priority: u8) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: i32::from(priority),
    };
    // SAFETY: `param` is a valid sched_param for the call's duration; the call changes
    // only the scheduling of the calling thread (pthread_self).
    match unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) } {
        0 => Ok(()),
        code => Err(io::Error::from_raw_os_error(code)),
    }
}

/// [`realtime`] for a thread that announces deadlines, unless turned off (`priority` 0);
/// a refusal (no `CAP_SYS_NICE` or rtprio limit, as in a container by default) is a
/// warning: the thread runs at normal priority, and everything else is the same.
pub fn deadline_thread(priority: u8, thread: &str) {
    if priority == 0 {
        return;
    }
    if let Err(e) = realtime(priority) {
        tracing::warn!(thread, priority, error = %e, "cannot run at real-time priority (needs CAP_SYS_NICE or an rtprio limit): normal priority, so on busy cores a death or an expiry may be told a few ms late (--realtime-priority 0: do not ask)");
    }
}

/// Sets the nice value of one of the runtime's threads (called as each starts), unless
/// `nice` is 0; a refusal (below 0 without `CAP_SYS_NICE`) is a warning, once.
///
/// Why: real-time is for threads that do little; these do all the work. But where other
/// work shares the cores (the load generator in the benchmarks, anything else on a host),
/// a ready worker waited for a core behind it: at 18,000 sockets on 2 cores, nice -10
/// took move p99 from 1.80-2.23 ms to 1.19-1.61 (BENCHMARKS.md, session 21).
pub fn worker_thread(nice_value: i32) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    if nice_value == 0 {
        return;
    }
    if let Err(e) = nice(nice_value) {
        WARNED.call_once(|| {
            tracing::warn!(nice = nice_value, error = %e, "cannot set the workers' nice value (below 0 needs CAP_SYS_NICE): they keep theirs (--worker-nice 0: do not ask)");
        });
    }
}

/// Sets the calling thread's nice value (inherited by the threads it starts).
pub fn nice(nice: i32) -> io::Result<()> {
    // SAFETY: setpriority has no memory effects; on Linux, PRIO_PROCESS with who = 0
    // sets the nice value of the calling thread only (it is a per-thread attribute).
    match unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// The scheduling policy of thread `tid` of this process (`libc::SCHED_*`).
pub fn policy_of(tid: i32) -> io::Result<i32> {
    // SAFETY: sched_getscheduler only reads the thread's attributes.
    match unsafe { libc::sched_getscheduler(tid) } {
        -1 => Err(io::Error::last_os_error()),
        policy => Ok(policy),
    }
}

/// The calling thread's id (for [`policy_of`]).
pub fn thread_id() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_runs_real_time_if_allowed_and_is_unchanged_if_refused() {
        std::thread::spawn(|| {
            let me = thread_id();
            match realtime(3) {
                Ok(()) => assert_eq!(policy_of(me).unwrap(), libc::SCHED_FIFO),
                Err(e) => {
                    assert_eq!(e.raw_os_error(), Some(libc::EPERM), "{e}");
                    assert_eq!(policy_of(me).unwrap(), libc::SCHED_OTHER);
                }
            }
        })
        .join()
        .unwrap();
        // Only that thread: this one runs as before.
        assert_eq!(policy_of(thread_id()).unwrap(), libc::SCHED_OTHER);
    }

    #[test]
    fn priority_zero_leaves_the_thread_alone() {
        std::thread::spawn(|| {
            deadline_thread(0, "test");
            assert_eq!(policy_of(thread_id()).unwrap(), libc::SCHED_OTHER);
        })
        .join()
        .unwrap();
    }
}
