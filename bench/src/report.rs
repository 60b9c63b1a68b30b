//! The figures of a run: medians, the table printed on the terminal, and `report.md`.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

/// What a ratio must be for the target to be met.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    /// The ratio must be at least this.
    AtLeast(f64),
    /// The ratio must be at most this.
    AtMost(f64),
    /// Reported only.
    None,
}

impl Target {
    fn text(self) -> String {
        match self {
            Self::AtLeast(t) => format!(">= {t:.2}x"),
            Self::AtMost(t) => format!("<= {t:.2}x"),
            Self::None => "(reported)".to_owned(),
        }
    }

    fn met(self, ratio: f64) -> Option<bool> {
        match self {
            Self::AtLeast(t) => Some(ratio >= t),
            Self::AtMost(t) => Some(ratio <= t),
            Self::None => None,
        }
    }
}

/// One line of the table.
#[derive(Debug, Clone)]
pub struct Row {
    /// Which benchmark (1 to 4) and what is compared.
    pub benchmark: String,
    /// The measured figure.
    pub figure: String,
    /// The baseline's figure.
    pub baseline: String,
    /// figure / baseline, oriented as the target reads it.
    pub ratio: f64,
    /// What the ratio must be.
    pub target: Target,
}

impl Row {
    /// Whether the target is met; `None` when there is no target.
    pub fn met(&self) -> Option<bool> {
        self.target.met(self.ratio)
    }

    fn cells(&self) -> [String; 6] {
        [
            self.benchmark.clone(),
            self.figure.clone(),
            self.baseline.clone(),
            if self.ratio.is_nan() {
                "-".to_owned()
            } else {
                format!("{:.2}x", self.ratio)
            },
            self.target.text(),
            match self.met() {
                Some(true) => "yes".to_owned(),
                Some(false) => "NO".to_owned(),
                None => "-".to_owned(),
            },
        ]
    }
}

const HEADER: [&str; 6] = ["benchmark", "figure", "baseline", "ratio", "target", "met"];

/// The table as aligned plain text.
pub fn text_table(rows: &[Row]) -> String {
    let cells: Vec<[String; 6]> = rows.iter().map(Row::cells).collect();
    let mut widths = HEADER.map(|h| h.chars().count());
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, row: &[String]| {
        let padded: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
            .collect();
        let _ = writeln!(out, "{}", padded.join("  ").trim_end());
    };
    line(&mut out, &HEADER.map(str::to_owned));
    line(&mut out, &widths.map(|w| "-".repeat(w)));
    for row in &cells {
        line(&mut out, row);
    }
    out
}

/// The table as Markdown.
pub fn markdown_table(rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "| {} |", HEADER.join(" | "));
    let _ = writeln!(out, "|{}", " --- |".repeat(HEADER.len()));
    for row in rows {
        let _ = writeln!(out, "| {} |", row.cells().join(" | "));
    }
    out
}

/// Writes `report.md`: how the run was made, then the table.
pub fn write_markdown(path: &Path, rows: &[Row], setup: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut text = String::from("# svc-rs benchmarks\n\n");
    text.push_str(setup);
    text.push_str("\n\n");
    text.push_str(&markdown_table(rows));
    text.push_str(
        "\nRatios, not absolute times, are the figures: see docs/performance.md for what each \
         one measures and why its target. Reproduce with `cargo xtask bench`.\n",
    );
    std::fs::write(path, text)
}

/// The median of some samples (the mean of the middle two for an even count).
pub fn median(samples: &[f64]) -> f64 {
    assert!(!samples.is_empty(), "a median of no samples");
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        f64::midpoint(sorted[mid - 1], sorted[mid])
    }
}

/// The median of some durations, in seconds.
pub fn median_secs(samples: &[Duration]) -> f64 {
    median(
        &samples
            .iter()
            .map(Duration::as_secs_f64)
            .collect::<Vec<_>>(),
    )
}

/// `12.3k req/s`, `850 req/s`.
pub fn per_second(n: f64, unit: &str) -> String {
    if n >= 1.0e6 {
        format!("{:.2}M {unit}/s", n / 1.0e6)
    } else if n >= 1.0e4 {
        format!("{:.1}k {unit}/s", n / 1.0e3)
    } else {
        format!("{n:.0} {unit}/s")
    }
}

/// `4.21 ms`, `830 us`, `1.52 s`.
pub fn seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1.0e-3 {
        format!("{:.2} ms", s * 1.0e3)
    } else {
        format!("{:.0} us", s * 1.0e6)
    }
}

/// `3.4 MiB`, `512 KiB`.
pub fn bytes(n: f64) -> String {
    if n >= 1024.0 * 1024.0 {
        format!("{:.2} MiB", n / (1024.0 * 1024.0))
    } else {
        format!("{:.0} KiB", n / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn targets() {
        assert_eq!(Target::AtLeast(0.9).met(0.9), Some(true));
        assert_eq!(Target::AtMost(1.1).met(1.2), Some(false));
        assert_eq!(Target::None.met(1.0), None);
    }
}
