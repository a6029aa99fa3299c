//! A child process under a deadline: its standard output read line by line as it comes, the
//! child killed when the deadline passes (a pin that never returns cannot be cancelled from
//! inside), and how it ended kept as a result.

use serde::{Deserialize, Serialize};
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a killed child is waited for before it is reported as not gone (a process in an
/// uninterruptible driver call dies only when the call returns).
pub const KILL_GRACE: Duration = Duration::from_secs(10);
/// How often a child that closed its output is asked whether it has exited.
const POLL: Duration = Duration::from_millis(20);

/// How the child ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ended", rename_all = "snake_case")]
pub enum ChildEnd {
    /// It exited by itself: its exit status (`None`: ended by a signal).
    Exited { code: Option<i32> },
    /// It did not return within the deadline and was killed; it was gone this many seconds
    /// after it started.
    Killed { deadline_s: f64, gone_after_s: f64 },
    /// It did not return within the deadline and was still there [`KILL_GRACE`] after the kill.
    NotGone { deadline_s: f64 },
}

impl ChildEnd {
    /// One sentence of how it ended.
    pub fn sentence(&self) -> String {
        match self {
            ChildEnd::Exited { code: Some(c) } => format!("the probe exited with status {c}"),
            ChildEnd::Exited { code: None } => "the probe was ended by a signal".into(),
            ChildEnd::Killed { deadline_s, .. } => {
                format!("the probe did not return in {deadline_s:.0} s and was killed")
            }
            ChildEnd::NotGone { deadline_s } => format!(
                "the probe did not return in {deadline_s:.0} s and was still running {} s after it was killed",
                KILL_GRACE.as_secs()
            ),
        }
    }
}

/// Starts `cmd` with its standard output piped (standard input closed, standard error as this
/// process has it), hands each line it writes to `on_line` as it comes, and kills it when
/// `deadline` has passed since the start. Lines written before the kill are all handed on.
pub fn run_with_deadline(
    mut cmd: Command,
    deadline: Duration,
    mut on_line: impl FnMut(&str),
) -> std::io::Result<ChildEnd> {
    let started = Instant::now();
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).spawn()?;
    let Some(out) = child.stdout.take() else {
        return Err(std::io::Error::other("the child's output was not piped"));
    };
    let (tx, rx) = mpsc::channel::<String>();
    // The reader ends when the child's output closes (it exited or was killed).
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let end = started + deadline;
    let closed = loop {
        let left = end.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => on_line(&line),
            Err(mpsc::RecvTimeoutError::Timeout) => break false,
            Err(mpsc::RecvTimeoutError::Disconnected) => break true,
        }
    };
    let exited = if closed {
        wait_until(&mut child, end)?
    } else {
        None
    };
    let ended = match exited {
        Some(code) => ChildEnd::Exited { code },
        None => kill(&mut child, started, deadline)?,
    };
    // What it wrote before it was killed.
    while let Ok(line) = rx.try_recv() {
        on_line(&line);
    }
    Ok(ended)
}

/// The child's exit status once it has exited, or `None` when `end` passed first.
fn wait_until(child: &mut Child, end: Instant) -> std::io::Result<Option<Option<i32>>> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status.code()));
        }
        if Instant::now() >= end {
            return Ok(None);
        }
        std::thread::sleep(POLL);
    }
}

fn kill(child: &mut Child, started: Instant, deadline: Duration) -> std::io::Result<ChildEnd> {
    let deadline_s = deadline.as_secs_f64();
    // It may have exited just now: then killing fails and the wait below finds it.
    let _ = child.kill();
    Ok(match wait_until(child, Instant::now() + KILL_GRACE)? {
        Some(_) => ChildEnd::Killed {
            deadline_s,
            gone_after_s: started.elapsed().as_secs_f64(),
        },
        None => ChildEnd::NotGone { deadline_s },
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn a_child_that_returns_in_time_gives_its_lines_and_status() {
        let mut lines = Vec::new();
        let end = run_with_deadline(
            sh("echo one; echo two; exit 5"),
            Duration::from_secs(20),
            |l| lines.push(l.to_string()),
        )
        .expect("sh runs");
        assert_eq!(end, ChildEnd::Exited { code: Some(5) });
        assert_eq!(lines, ["one", "two"]);
    }

    #[test]
    fn a_child_past_its_deadline_is_killed_and_its_lines_so_far_are_kept() {
        let started = Instant::now();
        let mut lines = Vec::new();
        let end = run_with_deadline(
            sh("echo before; exec sleep 30"),
            Duration::from_millis(600),
            |l| lines.push(l.to_string()),
        )
        .expect("sh runs");
        let took = started.elapsed();
        let ChildEnd::Killed {
            deadline_s,
            gone_after_s,
        } = end
        else {
            panic!("{end:?}")
        };
        assert!((deadline_s - 0.6).abs() < 1e-9);
        assert!((0.6..5.0).contains(&gone_after_s), "{gone_after_s}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        assert_eq!(lines, ["before"]);
        assert!(end_sentence(&end).contains("did not return in 1 s"));
    }

    #[test]
    fn a_child_that_closes_its_output_but_stays_is_killed_too() {
        let end = run_with_deadline(
            sh("exec >/dev/null; sleep 30"),
            Duration::from_millis(300),
            |_| {},
        )
        .expect("sh runs");
        assert!(matches!(end, ChildEnd::Killed { .. }), "{end:?}");
    }

    fn end_sentence(e: &ChildEnd) -> String {
        e.sentence()
    }
}
