//! Unit tests for the `/proc` helpers, using real `sleep` processes killed by PID.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use super::*;

fn kill_by_pid(pid: u32) {
    let status = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {pid} failed");
}

fn sleep_30() -> Child {
    Command::new("sleep").arg("30").spawn().unwrap()
}

/// Polls every 20 ms until `condition` holds; panics after 5 s.
fn poll_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(POLL_INTERVAL);
    }
}

#[test]
fn parse_stat_handles_parens_and_spaces_in_comm() {
    let stat = "42 (we ird) (x)) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 \
                123456 1 2 3";
    assert_eq!(
        parse_stat(stat),
        Some(("we ird) (x)".to_string(), 7, 'S', 123456))
    );
    assert_eq!(parse_stat("garbage"), None);
}

#[test]
fn current_process_is_alive_and_not_a_zombie() {
    let me = std::process::id();
    assert!(is_alive(me));
    assert!(!is_zombie(me));
    let info = ProcessInfo::read(me).unwrap();
    assert_eq!(info.pid, me);
    assert!(!info.cmdline.is_empty());
    assert!(!is_alive(u32::MAX), "no such pid");
}

#[test]
fn killed_child_is_a_zombie_until_reaped_then_gone() {
    let mut child = sleep_30();
    let pid = child.id();
    assert!(is_alive(pid));
    assert!(descendants(std::process::id()).contains(&pid));
    kill_by_pid(pid);
    poll_until("the killed sleep to become a zombie", || is_zombie(pid));
    assert!(!is_alive(pid), "zombies count as not alive");
    child.wait().unwrap();
    assert!(!is_zombie(pid));
    assert!(ProcessInfo::read(pid).is_none());
}

#[tokio::test]
async fn wait_until_gone_reports_survivors_then_succeeds() {
    let mut survivor = sleep_30();
    let mut victim = sleep_30();
    let (survivor_pid, victim_pid) = (survivor.id(), victim.id());
    kill_by_pid(victim_pid);
    let res = wait_until_gone(
        &[survivor_pid, victim_pid],
        Instant::now() + Duration::from_millis(200),
    )
    .await;
    assert_eq!(res, Err(vec![survivor_pid]));
    kill_by_pid(survivor_pid);
    let res = wait_until_gone(
        &[survivor_pid, victim_pid],
        Instant::now() + Duration::from_secs(5),
    )
    .await;
    assert_eq!(res, Ok(()));
    survivor.wait().unwrap();
    victim.wait().unwrap();
}

#[test]
fn blocking_wait_until_gone_honours_the_deadline() {
    let mut child = sleep_30();
    let pid = child.id();
    let started = Instant::now();
    let res = wait_until_gone_blocking(&[pid], started + Duration::from_millis(100));
    assert_eq!(res, Err(vec![pid]));
    assert!(started.elapsed() >= Duration::from_millis(100));
    kill_by_pid(pid);
    assert_eq!(
        wait_until_gone_blocking(&[pid], Instant::now() + Duration::from_secs(5)),
        Ok(())
    );
    child.wait().unwrap();
}

#[test]
fn descendants_include_grandchildren_and_profile_lookup_finds_them() {
    let profile =
        std::env::temp_dir().join(format!("chromate-procs-profile-{}", std::process::id()));
    // `; :` stops the shell from exec-ing sleep, so the shell keeps the profile flag as $1.
    let mut shell = Command::new("sh")
        .args(["-c", "sleep 30; :", "chrome"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .spawn()
        .unwrap();
    let shell_pid = shell.id();
    let mut grandchild = None;
    poll_until("the shell to start sleep", || {
        grandchild = descendants(shell_pid).first().copied();
        grandchild.is_some()
    });
    let grandchild = grandchild.unwrap();
    let mine = descendants(std::process::id());
    assert!(
        mine.contains(&shell_pid) && mine.contains(&grandchild),
        "{mine:?}"
    );
    assert_eq!(chrome_processes_with_profile(&profile), [shell_pid]);
    assert!(chrome_processes_with_profile(&profile.join("other")).is_empty());
    kill_by_pid(grandchild);
    kill_by_pid(shell_pid);
    shell.wait().unwrap();
    assert!(chrome_processes_with_profile(&profile).is_empty());
}

#[tokio::test]
async fn leak_guard_flags_chrome_like_children_started_after_it() {
    let mut before = Command::new("sleep")
        .arg0("chrome-before-guard")
        .arg("30")
        .spawn()
        .unwrap();
    let guard = LeakGuard::new();
    let mut plain = sleep_30();
    let mut leaked = Command::new("sleep")
        .arg0("chrome-leak-test")
        .arg("30")
        .spawn()
        .unwrap();
    // `spawn` returns once the child is in `execve`, whose new command line can be unset for
    // a moment after (the kernel releases a vfork parent before it writes the arguments):
    // wait until /proc shows it, as it will for any browser a test starts.
    poll_until("the chrome-like sleep's command line in /proc", || {
        guard.leaked().iter().any(|info| info.pid == leaked.id())
    });
    let leaked_pids: Vec<u32> = guard.leaked().iter().map(|info| info.pid).collect();
    assert!(leaked_pids.contains(&leaked.id()), "{leaked_pids:?}");
    assert!(
        !leaked_pids.contains(&before.id()),
        "started before the guard"
    );
    assert!(!leaked_pids.contains(&plain.id()), "not chrome-like");
    let message = std::panic::catch_unwind(|| guard.check()).unwrap_err();
    let message = message.downcast_ref::<String>().unwrap();
    assert!(message.contains("chrome-leak-test 30"), "{message}");

    kill_by_pid(leaked.id());
    // Zombies are not leaks, so this passes before the reap.
    guard
        .wait_for_no_leaks(Duration::from_secs(5))
        .await
        .unwrap_or_else(|still| {
            panic!("{}", describe(&still));
        });
    assert!(!guard.leaked().iter().any(|info| info.pid == leaked.id()));
    leaked.wait().unwrap();
    for child in [&mut before, &mut plain] {
        kill_by_pid(child.id());
        child.wait().unwrap();
    }
}
