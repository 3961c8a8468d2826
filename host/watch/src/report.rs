//! What `watch` prints: one line per cycle on stdout, each step with its
//! time (`✓ build 1.2 s · test 0.4 s (5 passed)` on a terminal, `ok: build
//! 1.2 s, test 0.4 s (5 passed)` elsewhere); a failed step's error after its
//! line, on stderr; on a terminal, the step that is running, on stderr.

use std::io::{IsTerminal as _, Write as _};
use std::time::Duration;

use crate::cycle::{Cycle, Observer, Outcome, StepReport};

/// How lines look: for a terminal (symbols, colour) or plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Terminal,
    Plain,
}

/// The cycle's line, without its newline.
pub(crate) fn line(cycle: &Cycle, style: Style) -> String {
    let steps: Vec<String> = cycle.steps.iter().map(step).collect();
    let failed = cycle.failed().is_some();
    match style {
        Style::Terminal => {
            let (mark, colour) = if failed { ("✗", "31") } else { ("✓", "32") };
            format!("\x1b[{colour}m{mark}\x1b[0m {}", steps.join(" · "))
        }
        Style::Plain => {
            let verdict = if failed { "FAILED" } else { "ok" };
            format!("{verdict}: {}", steps.join(", "))
        }
    }
}

fn step(report: &StepReport) -> String {
    let time = seconds(report.took);
    match &report.outcome {
        Outcome::Done(None) => format!("{} {time}", report.name),
        Outcome::Done(Some(detail)) => format!("{} {time} ({detail})", report.name),
        Outcome::Failed { summary, .. } => match summary {
            Some(summary) => format!("{} {time} failed ({summary})", report.name),
            None => format!("{} {time} failed", report.name),
        },
        Outcome::Stopped => format!("{} {time} stopped", report.name),
    }
}

/// A duration as people read a step's: `0.04 s`, `12.3 s`, `2 min 5 s`.
pub(crate) fn seconds(took: Duration) -> String {
    let secs = took.as_secs_f64();
    if secs < 0.995 {
        format!("{secs:.2} s")
    } else if secs < 99.95 {
        format!("{secs:.1} s")
    } else {
        let whole = took.as_secs();
        format!("{} min {} s", whole / 60, whole % 60)
    }
}

/// Prints to the process's stdout and stderr.
pub(crate) struct Printer {
    style: Style,
    /// Whether a status line is on the terminal, to be cleared.
    status: bool,
}

impl Printer {
    /// Terminal style when stdout is a terminal.
    pub(crate) fn new() -> Self {
        let style = if std::io::stdout().is_terminal() {
            Style::Terminal
        } else {
            Style::Plain
        };
        Self {
            style,
            status: false,
        }
    }

    fn clear_status(&mut self) {
        if self.status {
            eprint!("\r\x1b[2K");
            self.status = false;
        }
    }
}

impl Observer for Printer {
    fn step_started(&mut self, _cycle: usize, name: &'static str) {
        if self.style == Style::Terminal && std::io::stderr().is_terminal() {
            self.clear_status();
            eprint!("\x1b[2m… {name}\x1b[0m");
            let _ = std::io::stderr().flush();
            self.status = true;
        }
    }

    fn cycle_ended(&mut self, cycle: &Cycle, stopping: bool) {
        self.clear_status();
        if stopping {
            // The closing line says what was interrupted.
            return;
        }
        println!("{}", line(cycle, self.style));
        let _ = std::io::stdout().flush();
        if let Some(StepReport {
            outcome: Outcome::Failed { detail, .. },
            ..
        }) = cycle.failed()
        {
            let detail = detail.trim_end();
            if !detail.is_empty() {
                eprintln!("{detail}");
            }
            eprintln!("watch: waiting for a change");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(name: &'static str, ms: u64, outcome: Outcome) -> StepReport {
        StepReport {
            name,
            took: Duration::from_millis(ms),
            outcome,
        }
    }

    #[test]
    fn a_passing_cycle_is_one_line_with_each_steps_time() {
        let cycle = Cycle {
            number: 2,
            steps: vec![
                report("build", 1_234, Outcome::Done(None)),
                report("test", 420, Outcome::Done(Some("5 passed".into()))),
                report("package", 800, Outcome::Done(None)),
                report("install", 2_080, Outcome::Done(None)),
            ],
        };
        assert_eq!(
            line(&cycle, Style::Plain),
            "ok: build 1.2 s, test 0.42 s (5 passed), package 0.80 s, install 2.1 s"
        );
        assert_eq!(
            line(&cycle, Style::Terminal),
            "\x1b[32m✓\x1b[0m build 1.2 s · test 0.42 s (5 passed) · package 0.80 s · install 2.1 s"
        );
    }

    #[test]
    fn a_failed_cycle_names_the_step_that_failed() {
        let cycle = Cycle {
            number: 3,
            steps: vec![
                report("build", 300, Outcome::Done(None)),
                report(
                    "test",
                    1_000,
                    Outcome::Failed {
                        summary: Some("4 passed, 1 failed".into()),
                        detail: "FAIL greeting".into(),
                    },
                ),
            ],
        };
        assert_eq!(
            line(&cycle, Style::Plain),
            "FAILED: build 0.30 s, test 1.0 s failed (4 passed, 1 failed)"
        );
        assert!(line(&cycle, Style::Terminal).starts_with("\x1b[31m✗\x1b[0m build 0.30 s · "));
    }

    #[test]
    fn long_steps_read_in_minutes() {
        assert_eq!(seconds(Duration::from_millis(42)), "0.04 s");
        assert_eq!(seconds(Duration::from_millis(1_250)), "1.2 s");
        assert_eq!(seconds(Duration::from_millis(99_940)), "99.9 s");
        assert_eq!(seconds(Duration::from_secs(125)), "2 min 5 s");
    }
}
