//! Progress on stderr: a line redrawn in place while stderr is a terminal, a plain summary line
//! otherwise (so logs get one line, not hundreds of redraws).
//!
//! The line on the terminal is shared state: whatever else writes to the terminal while it is
//! shown (records on a stdout that is the same terminal, the `-v` log) calls [`clear`] first, so
//! that its text starts on a clean line; the next redraw puts the progress back under it.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use unicode_width::UnicodeWidthStr;

/// Columns of the progress line now on the terminal (0: none).
static SHOWN: Mutex<usize> = Mutex::new(0);

/// How often the line is redrawn at most.
pub const REDRAW: Duration = Duration::from_millis(100);
/// Rate and ETA are shown once the export has run this long (before, they are noise).
const SETTLED: Duration = Duration::from_secs(1);

/// Blanks the progress line, if one is shown, leaving the cursor at the start of that line.
pub fn clear() {
    let mut shown = SHOWN.lock().unwrap_or_else(|e| e.into_inner());
    if *shown > 0 {
        // Spaces rather than an erase escape: any terminal understands them. Four more cover a
        // `^C` the terminal may have echoed after the line.
        let _ = write!(std::io::stderr(), "\r{}\r", " ".repeat(*shown + 4));
        *shown = 0;
    }
}

/// Puts `line` in place of the progress line (and `\n` after it when `last`).
pub fn draw(line: &str, last: bool) {
    let mut shown = SHOWN.lock().unwrap_or_else(|e| e.into_inner());
    let width = line.width();
    // Cover what was there before, when it was longer.
    let pad = " ".repeat(shown.saturating_sub(width));
    let end = if last { "\n" } else { "" };
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r{line}{pad}{end}");
    let _ = err.flush();
    *shown = if last { 0 } else { width };
}

/// The progress of an export: records written so far against the total the first page told.
#[derive(Debug)]
pub struct Export {
    /// Redraw the line (stderr is a terminal); else only the summary is printed.
    live: bool,
    started: Instant,
    /// When the line was last drawn; `None` before the first record.
    drawn: Option<Instant>,
    /// Where the records go, for the summary (`None`: stdout).
    target: Option<String>,
}

impl Export {
    /// Starts the clock. `target` names the file the records go to.
    pub fn new(target: Option<String>) -> Self {
        Self {
            live: std::io::stderr().is_terminal(),
            started: Instant::now(),
            drawn: None,
            target,
        }
    }

    /// `written` records so far, of `total` (if known). Draws at once the first time, then at
    /// most every [`REDRAW`].
    pub fn tick(&mut self, written: u64, total: Option<u64>) {
        if !self.live {
            return;
        }
        let now = Instant::now();
        if self.drawn.is_some_and(|at| now.duration_since(at) < REDRAW) {
            return;
        }
        self.drawn = Some(now);
        draw(
            &line(written, total, now.duration_since(self.started)),
            false,
        );
    }

    /// The export is complete: the summary, in place of the progress line on a terminal, or as
    /// one line of its own.
    pub fn done(&mut self, written: u64) {
        let text = summary(written, self.target.as_deref(), self.started.elapsed());
        if self.live {
            draw(&text, true);
        } else {
            let _ = writeln!(std::io::stderr(), "{text}");
        }
    }

    /// The export stopped early: the line goes away (the command's message follows).
    pub fn abandon(&mut self) {
        if self.live {
            clear();
        }
    }
}

/// The progress line: `3000 of 12000 records (25%), 5210 records/s, ETA 2s`.
fn line(written: u64, total: Option<u64>, elapsed: Duration) -> String {
    let rate = (elapsed >= SETTLED).then(|| written as f64 / elapsed.as_secs_f64());
    let mut text = match total {
        // A total passed (records added during the export) says nothing any more.
        Some(total) if written <= total && total > 0 => {
            let percent = written.saturating_mul(100) / total;
            format!("{written} of {total} {} ({percent}%)", noun(total))
        }
        _ => format!("{written} {}", noun(written)),
    };
    if let Some(rate) = rate {
        text.push_str(&format!(", {} records/s", rate.round() as u64));
        if let Some(total) = total.filter(|&t| t >= written)
            && rate > 0.0
        {
            let left = (total - written) as f64 / rate;
            text.push_str(&format!(", ETA {}", duration(left)));
        }
    }
    text
}

/// The last line: `12000 records exported to orders.csv in 2.3 s (5217 records/s)`.
fn summary(written: u64, target: Option<&str>, elapsed: Duration) -> String {
    let to = target.map(|t| format!(" to {t}")).unwrap_or_default();
    // Tenths of a second, rounded up: a quick export took "0.1 s", not "0.0 s".
    let tenths = elapsed.as_millis().div_ceil(100);
    let seconds = elapsed.as_secs_f64();
    let rate = if seconds > 0.0 {
        format!(" ({} records/s)", (written as f64 / seconds).round() as u64)
    } else {
        String::new()
    };
    format!(
        "{written} {} exported{to} in {}.{} s{rate}",
        noun(written),
        tenths / 10,
        tenths % 10
    )
}

fn noun(n: u64) -> &'static str {
    if n == 1 { "record" } else { "records" }
}

/// Seconds as `7s`, `3m07s` or `1h02m`.
fn duration(seconds: f64) -> String {
    let s = seconds.ceil() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_gives_total_rate_and_eta_once_settled() {
        // The first draw comes before a second has passed: no rate, no ETA yet.
        assert_eq!(
            line(1, Some(12_000), Duration::from_millis(30)),
            "1 of 12000 records (0%)"
        );
        assert_eq!(
            line(3000, Some(12_000), Duration::from_secs(2)),
            "3000 of 12000 records (25%), 1500 records/s, ETA 6s"
        );
        assert_eq!(
            line(100, Some(100_000), Duration::from_secs(10)),
            "100 of 100000 records (0%), 10 records/s, ETA 2h46m"
        );
        assert_eq!(
            line(6000, Some(60_000), Duration::from_secs(60)),
            "6000 of 60000 records (10%), 100 records/s, ETA 9m00s"
        );
        // More records than the first page announced: no total, no ETA.
        assert_eq!(
            line(12_001, Some(12_000), Duration::from_secs(4)),
            "12001 records, 3000 records/s"
        );
        assert_eq!(line(1, None, Duration::ZERO), "1 record");
        assert_eq!(line(1, Some(1), Duration::ZERO), "1 of 1 record (100%)");
    }

    #[test]
    fn the_summary_says_how_many_where_and_how_fast() {
        assert_eq!(
            summary(12_000, Some("orders.csv"), Duration::from_millis(2300)),
            "12000 records exported to orders.csv in 2.3 s (5217 records/s)"
        );
        assert_eq!(
            summary(1, None, Duration::from_millis(50)),
            "1 record exported in 0.1 s (20 records/s)"
        );
        assert_eq!(
            summary(0, None, Duration::ZERO),
            "0 records exported in 0.0 s"
        );
    }
}
