//! Several GPUs measured at the same time: every GPU's thread starts each sample together with
//! the others, and they all stop after the same sample. A member that fails (or never gets to
//! measure) leaves, so the others never wait for it.

use std::sync::{Condvar, Mutex};

/// What one member wants after its latest sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vote {
    /// Its stopping rule wants more samples.
    More,
    /// Its stopping rule is satisfied (the spread target is met); it would stop.
    Enough,
    /// It must stop now (sample cap, time limit, interruption, an error).
    Stop,
}

/// A reusable barrier that also decides, once per round, whether everyone goes on: the round
/// goes on unless some member votes [`Vote::Stop`] or every member votes [`Vote::Enough`].
pub struct Lockstep {
    state: Mutex<State>,
    cv: Condvar,
}

struct State {
    members: usize,
    arrived: usize,
    enough: usize,
    stop: bool,
    generation: u64,
    /// The decision of the last completed round.
    go_on: bool,
}

impl Lockstep {
    pub fn new(members: usize) -> Lockstep {
        Lockstep {
            state: Mutex::new(State {
                members,
                arrived: 0,
                enough: 0,
                stop: false,
                generation: 0,
                go_on: true,
            }),
            cv: Condvar::new(),
        }
    }

    /// Waits until every member has voted, then returns whether to take another sample.
    pub fn round(&self, vote: Vote) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.arrived += 1;
        match vote {
            Vote::More => {}
            Vote::Enough => s.enough += 1,
            Vote::Stop => s.stop = true,
        }
        let generation = s.generation;
        if s.arrived >= s.members {
            Self::complete(&mut s);
            self.cv.notify_all();
            return s.go_on;
        }
        while s.generation == generation {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.go_on
    }

    /// Leaves for good: later rounds no longer wait for this member.
    pub fn leave(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.members = s.members.saturating_sub(1);
        if s.members > 0 && s.arrived >= s.members {
            Self::complete(&mut s);
            self.cv.notify_all();
        }
    }

    fn complete(s: &mut State) {
        s.go_on = !s.stop && s.enough < s.arrived;
        s.arrived = 0;
        s.enough = 0;
        s.stop = false;
        s.generation = s.generation.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Runs `members` threads; member i votes Enough from sample `enough_at[i]` on; returns the
    /// number of samples each took.
    fn run(enough_at: &[usize], stop_at: Option<(usize, usize)>) -> Vec<usize> {
        let ls = Arc::new(Lockstep::new(enough_at.len()));
        let handles: Vec<_> = enough_at
            .iter()
            .enumerate()
            .map(|(i, &at)| {
                let ls = Arc::clone(&ls);
                std::thread::spawn(move || {
                    let mut n = 0;
                    let mut vote = Vote::More;
                    while ls.round(vote) {
                        n += 1;
                        vote = match stop_at {
                            Some((who, when)) if who == i && n >= when => Vote::Stop,
                            _ if n >= at => Vote::Enough,
                            _ => Vote::More,
                        };
                    }
                    n
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("member"))
            .collect()
    }

    #[test]
    fn everyone_takes_the_same_number_of_samples_until_all_have_enough() {
        assert_eq!(run(&[3, 5, 2], None), vec![5, 5, 5]);
        assert_eq!(run(&[1], None), vec![1]);
    }

    #[test]
    fn one_stop_vote_ends_the_round_for_all() {
        assert_eq!(run(&[100, 100], Some((1, 4))), vec![4, 4]);
    }

    #[test]
    fn a_member_that_leaves_is_not_waited_for() {
        let ls = Arc::new(Lockstep::new(3));
        let samples = Arc::new(AtomicUsize::new(0));
        let mut handles = Vec::new();
        for i in 0..3 {
            let ls = Arc::clone(&ls);
            let samples = Arc::clone(&samples);
            handles.push(std::thread::spawn(move || {
                if i == 2 {
                    // fails before measuring
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    ls.leave();
                    return;
                }
                let mut n = 0;
                let mut vote = Vote::More;
                while ls.round(vote) {
                    n += 1;
                    samples.fetch_add(1, Ordering::SeqCst);
                    vote = if n >= 3 { Vote::Enough } else { Vote::More };
                }
            }));
        }
        for h in handles {
            h.join().expect("member");
        }
        assert_eq!(samples.load(Ordering::SeqCst), 6);
    }
}
