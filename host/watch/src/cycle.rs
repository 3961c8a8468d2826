//! The loop itself, generic over its steps and over where changes come from:
//! one cycle at start, then one per burst of changes.
//!
//! - A cycle runs the steps in order and ends at the first that does not
//!   succeed; it never overlaps another.
//! - A change starts the wait for quiet: the next cycle starts once no change
//!   has come for the quiet time (a burst of saves is one cycle).
//! - Changes while a cycle runs make exactly one more cycle after it (from
//!   the quiet time after the last of them).
//! - A stop ends the wait at once, or stops the running step (the step ends
//!   its own work and returns) and ends the loop after it.

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// What one step came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It did its work; what to show beside its time (`5 passed`), if anything.
    Done(Option<String>),
    /// It failed: a short word for the cycle's line, and what to show the author.
    Failed {
        summary: Option<String>,
        detail: String,
    },
    /// It was stopped before it finished.
    Stopped,
}

/// The steps of a cycle.
pub(crate) trait Steps {
    /// The steps' names, in the order they run.
    fn names(&self) -> Vec<&'static str>;
    /// Runs the step at `index`; once `stop` is cancelled it ends its work
    /// (its child processes too) and returns [`Outcome::Stopped`].
    async fn run(&mut self, index: usize, stop: &CancellationToken) -> Outcome;
}

/// What the loop is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    /// Something the provider is made from changed.
    Changed,
    /// The author asked to stop (Ctrl-C, SIGTERM), or the source ended.
    Stop,
}

/// Where the loop's events come from. `next` must be cancel-safe: the loop
/// drops it when a timer or a cycle ends first.
pub(crate) trait Events {
    /// The next event; a source that can give no more returns [`Event::Stop`].
    async fn next(&mut self) -> Event;
}

/// One step of a cycle as it went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StepReport {
    pub(crate) name: &'static str,
    pub(crate) took: Duration,
    pub(crate) outcome: Outcome,
}

/// One cycle as it went: the steps that ran, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cycle {
    /// 1 for the cycle at start.
    pub(crate) number: usize,
    pub(crate) steps: Vec<StepReport>,
}

impl Cycle {
    /// The step that did not succeed, if one did not.
    pub(crate) fn failed(&self) -> Option<&StepReport> {
        self.steps
            .iter()
            .find(|s| matches!(s.outcome, Outcome::Failed { .. }))
    }

    /// The step a stop interrupted, if one was.
    pub(crate) fn stopped(&self) -> Option<&StepReport> {
        self.steps.iter().find(|s| s.outcome == Outcome::Stopped)
    }
}

/// Who hears what the loop does (the terminal, or a test).
pub(crate) trait Observer {
    /// A step starts (for a terminal's status line).
    fn step_started(&mut self, _cycle: usize, _name: &'static str) {}
    /// A cycle ended; `stopping` when a stop interrupted it and the loop ends.
    fn cycle_ended(&mut self, cycle: &Cycle, stopping: bool);
}

/// How the loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ended {
    /// The cycles that ran (the interrupted one included).
    pub(crate) cycles: usize,
    /// The step a stop interrupted, when it came during a cycle.
    pub(crate) interrupted: Option<&'static str>,
}

/// Runs the loop until a stop: a cycle at start, then one after each burst
/// of changes, `quiet` after its last change.
pub(crate) async fn run(
    steps: &mut impl Steps,
    events: &mut impl Events,
    quiet: Duration,
    observer: &mut impl Observer,
) -> Ended {
    let mut cycles = 0;
    // The latest change no cycle has started after yet; the first cycle needs none.
    let mut pending: Option<Instant> = None;
    loop {
        if cycles > 0 {
            if pending.is_none() {
                match events.next().await {
                    Event::Changed => pending = Some(Instant::now()),
                    Event::Stop => return ended(cycles, None),
                }
            }
            while let Some(last) = pending {
                tokio::select! {
                    biased;
                    event = events.next() => match event {
                        Event::Changed => pending = Some(Instant::now()),
                        Event::Stop => return ended(cycles, None),
                    },
                    () = tokio::time::sleep_until(last + quiet) => break,
                }
            }
        }
        pending = None;
        cycles += 1;
        let stop = CancellationToken::new();
        let (cycle, stopping) = {
            let running = run_cycle(steps, cycles, &stop, observer);
            tokio::pin!(running);
            let mut stopping = false;
            loop {
                tokio::select! {
                    cycle = &mut running => break (cycle, stopping),
                    event = events.next(), if !stopping => match event {
                        Event::Changed => pending = Some(Instant::now()),
                        Event::Stop => {
                            stop.cancel();
                            stopping = true;
                        }
                    },
                }
            }
        };
        observer.cycle_ended(&cycle, stopping);
        if stopping {
            return ended(cycles, cycle.stopped().map(|s| s.name));
        }
    }
}

fn ended(cycles: usize, interrupted: Option<&'static str>) -> Ended {
    Ended {
        cycles,
        interrupted,
    }
}

/// One cycle: each step in turn, up to the first that does not succeed.
async fn run_cycle(
    steps: &mut impl Steps,
    number: usize,
    stop: &CancellationToken,
    observer: &mut impl Observer,
) -> Cycle {
    let mut reports = Vec::new();
    for (index, name) in steps.names().into_iter().enumerate() {
        if stop.is_cancelled() {
            break;
        }
        observer.step_started(number, name);
        let started = Instant::now();
        let outcome = steps.run(index, stop).await;
        let done = matches!(outcome, Outcome::Done(_));
        reports.push(StepReport {
            name,
            took: started.elapsed(),
            outcome,
        });
        if !done {
            break;
        }
    }
    Cycle {
        number,
        steps: reports,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::mpsc;

    const QUIET: Duration = Duration::from_millis(250);

    /// Steps that take a set time each; one may fail on chosen cycles. They
    /// note when each cycle started and ended (tokio's paused clock).
    struct FakeSteps {
        took: Duration,
        fail_build_on: Vec<usize>,
        runs: Vec<(Instant, Option<Instant>)>,
        cycle: usize,
    }

    impl FakeSteps {
        fn new(took_ms: u64) -> Self {
            Self {
                took: Duration::from_millis(took_ms),
                fail_build_on: Vec::new(),
                runs: Vec::new(),
                cycle: 0,
            }
        }
    }

    impl Steps for FakeSteps {
        fn names(&self) -> Vec<&'static str> {
            vec!["build", "test"]
        }

        async fn run(&mut self, index: usize, stop: &CancellationToken) -> Outcome {
            if index == 0 {
                self.cycle += 1;
                self.runs.push((Instant::now(), None));
            }
            tokio::select! {
                () = tokio::time::sleep(self.took) => {}
                () = stop.cancelled() => return Outcome::Stopped,
            }
            if index == 0 && self.fail_build_on.contains(&self.cycle) {
                if let Some(run) = self.runs.last_mut() {
                    run.1 = Some(Instant::now());
                }
                return Outcome::Failed {
                    summary: None,
                    detail: "syntax error".into(),
                };
            }
            if index == 1 {
                if let Some(run) = self.runs.last_mut() {
                    run.1 = Some(Instant::now());
                }
                return Outcome::Done(Some("1 passed".into()));
            }
            Outcome::Done(None)
        }
    }

    struct Channel(mpsc::UnboundedReceiver<Event>);

    impl Events for Channel {
        async fn next(&mut self) -> Event {
            self.0.recv().await.unwrap_or(Event::Stop)
        }
    }

    #[derive(Default)]
    struct Seen {
        cycles: Vec<(Cycle, bool)>,
        started: Vec<(usize, &'static str)>,
    }

    impl Observer for Seen {
        fn step_started(&mut self, cycle: usize, name: &'static str) {
            self.started.push((cycle, name));
        }
        fn cycle_ended(&mut self, cycle: &Cycle, stopping: bool) {
            self.cycles.push((cycle.clone(), stopping));
        }
    }

    /// Sends each event at its time (from the start), then nothing more.
    fn script(events: Vec<(u64, Event)>) -> Channel {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let start = Instant::now();
            for (at, event) in events {
                tokio::time::sleep_until(start + Duration::from_millis(at)).await;
                if tx.send(event).is_err() {
                    return;
                }
            }
            // Keep the channel open: the loop must end on a Stop, not on a closed source.
            std::future::pending::<()>().await;
        });
        Channel(rx)
    }

    fn ms(since: Instant, at: Instant) -> u128 {
        at.duration_since(since).as_millis()
    }

    #[tokio::test(start_paused = true)]
    async fn a_cycle_runs_at_start_and_nothing_more_without_a_change() {
        let start = Instant::now();
        let mut steps = FakeSteps::new(100);
        let mut events = script(vec![(5_000, Event::Stop)]);
        let mut seen = Seen::default();
        let ended = run(&mut steps, &mut events, QUIET, &mut seen).await;
        assert_eq!(ended.cycles, 1);
        assert_eq!(ended.interrupted, None);
        assert_eq!(steps.runs.len(), 1);
        assert_eq!(
            ms(start, steps.runs[0].0),
            0,
            "the first cycle waits for nothing"
        );
        assert_eq!(seen.started, [(1, "build"), (1, "test")]);
        let (cycle, stopping) = &seen.cycles[0];
        assert!(!stopping);
        assert_eq!(
            cycle.steps[1].outcome,
            Outcome::Done(Some("1 passed".into()))
        );
        assert_eq!(cycle.steps[0].took, Duration::from_millis(100));
        assert_eq!(ms(start, Instant::now()), 5_000, "it ended at the stop");
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_changes_is_one_cycle_after_the_quiet_time() {
        let start = Instant::now();
        let mut steps = FakeSteps::new(100);
        // After the first cycle (0-200 ms): saves at 1000, 1100, ..., 1400 ms.
        let mut script_events: Vec<(u64, Event)> =
            (0..5).map(|i| (1_000 + i * 100, Event::Changed)).collect();
        script_events.push((5_000, Event::Stop));
        let mut events = script(script_events);
        let ended = run(&mut steps, &mut events, QUIET, &mut Seen::default()).await;
        assert_eq!(ended.cycles, 2, "five saves, one cycle");
        assert_eq!(
            ms(start, steps.runs[1].0),
            1_400 + QUIET.as_millis(),
            "the cycle starts once the last save has been quiet for the quiet time"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn changes_during_a_cycle_make_exactly_one_more_after_it() {
        let mut steps = FakeSteps::new(1_000);
        // The first cycle runs 0-2000 ms; three changes come while it runs.
        let mut events = script(vec![
            (300, Event::Changed),
            (900, Event::Changed),
            (1_500, Event::Changed),
            (10_000, Event::Stop),
        ]);
        let ended = run(&mut steps, &mut events, QUIET, &mut Seen::default()).await;
        assert_eq!(
            ended.cycles, 2,
            "three changes during a cycle: one more cycle"
        );
        let (first_start, first_end) = steps.runs[0];
        let first_end = first_end.unwrap();
        let (second_start, _) = steps.runs[1];
        assert!(second_start >= first_end, "cycles never overlap");
        assert_eq!(
            ms(first_start, second_start),
            2_000,
            "the last change was quiet long before the cycle ended: the next starts at once"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_change_at_the_end_of_a_cycle_waits_for_its_quiet_time() {
        let start = Instant::now();
        let mut steps = FakeSteps::new(500);
        let mut events = script(vec![(950, Event::Changed), (10_000, Event::Stop)]);
        run(&mut steps, &mut events, QUIET, &mut Seen::default()).await;
        assert_eq!(steps.runs.len(), 2);
        assert_eq!(ms(start, steps.runs[1].0), 950 + QUIET.as_millis());
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_step_ends_its_cycle_and_the_loop_waits_for_the_next_change() {
        let mut steps = FakeSteps::new(100);
        steps.fail_build_on = vec![1];
        let mut events = script(vec![(1_000, Event::Changed), (5_000, Event::Stop)]);
        let mut seen = Seen::default();
        let ended = run(&mut steps, &mut events, QUIET, &mut seen).await;
        assert_eq!(ended.cycles, 2);
        let first = &seen.cycles[0].0;
        assert_eq!(first.steps.len(), 1, "no test after a failed build");
        assert_eq!(first.failed().map(|s| s.name), Some("build"));
        let second = &seen.cycles[1].0;
        assert_eq!(second.failed(), None);
        assert_eq!(second.steps.len(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_stop_during_a_step_stops_it_and_ends_the_loop() {
        let start = Instant::now();
        let mut steps = FakeSteps::new(10_000);
        let mut events = script(vec![(300, Event::Stop), (400, Event::Changed)]);
        let mut seen = Seen::default();
        let ended = run(&mut steps, &mut events, QUIET, &mut seen).await;
        assert_eq!(ended.cycles, 1);
        assert_eq!(ended.interrupted, Some("build"));
        assert_eq!(ms(start, Instant::now()), 300, "the step stopped at once");
        let (cycle, stopping) = &seen.cycles[0];
        assert!(stopping);
        assert_eq!(cycle.steps.len(), 1, "no step starts after a stop");
        assert_eq!(cycle.steps[0].outcome, Outcome::Stopped);
    }

    #[tokio::test(start_paused = true)]
    async fn a_stop_while_waiting_for_quiet_runs_no_cycle() {
        let mut steps = FakeSteps::new(100);
        let mut events = script(vec![(1_000, Event::Changed), (1_100, Event::Stop)]);
        let ended = run(&mut steps, &mut events, QUIET, &mut Seen::default()).await;
        assert_eq!(
            ended.cycles, 1,
            "the change was still settling when the stop came"
        );
        assert_eq!(ended.interrupted, None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_source_that_ends_ends_the_loop() {
        let (tx, rx) = mpsc::unbounded_channel::<Event>();
        // The source closes 50 ms into the first cycle's build (closed from the start, the stop
        // could win the race with the cycle's first step, which then never starts).
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            drop(tx);
        });
        let mut steps = FakeSteps::new(100);
        let ended = run(&mut steps, &mut Channel(rx), QUIET, &mut Seen::default()).await;
        // The closed source is seen while the first cycle runs: it is stopped.
        assert_eq!(ended.cycles, 1);
        assert_eq!(ended.interrupted, Some("build"));
    }
}
