//! What a run found, for people and for CI systems: a summary on the terminal by verdict and
//! model; JSON (every request, and the differences again as cases `--replay` sends); JUnit
//! XML (one test case per request, a failure carrying both answers); and one self-contained
//! HTML page (both answers side by side, filters by verdict and model, no network). None of
//! them holds a credential: requests are written without their `Authorization`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};
use unicode_width::UnicodeWidthStr;

use crate::verify::case::{Case, Kind};
use crate::verify::compare::{Answer, Verdict};
use crate::verify::mask::for_terminal;

/// One request sent, both answers and the verdict.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Its number in the run, from 1.
    pub n: usize,
    pub case: Case,
    pub reference: Answer,
    pub emulator: Answer,
    pub verdict: Verdict,
}

/// A whole run.
#[derive(Debug, Clone)]
pub struct Run {
    /// The reference's base URL.
    pub reference: String,
    pub kind: Kind,
    pub project: String,
    pub resource: String,
    /// The seed the requests were drawn with (`None`: replayed cases).
    pub seed: Option<u64>,
    /// How many requests were to be sent.
    pub planned: usize,
    /// Ctrl-C stopped the run before its end.
    pub interrupted: bool,
    pub outcomes: Vec<Outcome>,
}

const VERDICTS: [&str; 4] = ["agrees", "decision", "difference", "not_compared"];

impl Run {
    /// The outcomes that differ.
    pub fn differences(&self) -> impl Iterator<Item = &Outcome> {
        self.outcomes
            .iter()
            .filter(|o| matches!(o.verdict, Verdict::Difference { .. }))
    }

    /// Counts by verdict, in [`VERDICTS`]' order.
    fn counts<'o>(outcomes: impl Iterator<Item = &'o Outcome>) -> [usize; 4] {
        let mut counts = [0; 4];
        for o in outcomes {
            let i = VERDICTS.iter().position(|v| *v == o.verdict.name());
            counts[i.unwrap_or(0)] += 1;
        }
        counts
    }

    /// Counts by model (and `sql`), sorted by name.
    fn by_model(&self) -> BTreeMap<&str, [usize; 4]> {
        let mut models: BTreeMap<&str, Vec<&Outcome>> = BTreeMap::new();
        for o in &self.outcomes {
            models.entry(o.case.subject()).or_default().push(o);
        }
        models
            .into_iter()
            .map(|(m, list)| (m, Self::counts(list.into_iter())))
            .collect()
    }

    /// The terminal's summary: the totals, a line per model, each class of difference and of
    /// decision with how often it came and its first request.
    pub fn summary(&self) -> String {
        let [agrees, decisions, differences, not_compared] = Self::counts(self.outcomes.iter());
        let mut out = String::new();
        let stopped = if self.interrupted {
            format!(
                " (interrupted: {} of {} sent)",
                self.outcomes.len(),
                self.planned
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "verify: {} requests against {} ({}){stopped}: {agrees} agree, {decisions} documented \
             decisions, {differences} differences, {not_compared} not compared",
            self.outcomes.len(),
            self.reference,
            kind_name(self.kind),
        );
        let _ = writeln!(
            out,
            "  {:<24} {:>7} {:>9} {:>11} {:>12}",
            "model", "agree", "decision", "difference", "not compared"
        );
        for (model, [a, d, x, n]) in self.by_model() {
            let model = for_terminal(model);
            // Padded by terminal columns: a CJK name takes two a character.
            let pad = " ".repeat(24usize.saturating_sub(model.width()));
            let _ = writeln!(out, "  {model}{pad} {a:>7} {d:>9} {x:>11} {n:>12}");
        }
        for (title, verdict) in [
            ("differences", "difference"),
            ("documented decisions", "decision"),
        ] {
            let mut classes: BTreeMap<String, (usize, &Outcome)> = BTreeMap::new();
            for o in self.outcomes.iter().filter(|o| o.verdict.name() == verdict) {
                classes.entry(o.verdict.class()).or_insert((0, o)).0 += 1;
            }
            if classes.is_empty() {
                continue;
            }
            let _ = writeln!(out, "{title}:");
            // What a reference sent (keys, values) is shown, never acted on by the terminal.
            for (class, (count, first)) in classes {
                let _ = writeln!(out, "  {count} x {}", for_terminal(&class));
                let _ = writeln!(
                    out,
                    "      first: #{} {}",
                    first.n,
                    for_terminal(&first.case.describe())
                );
                match &first.verdict {
                    Verdict::Difference { detail, .. } => {
                        let _ = writeln!(out, "      {}", for_terminal(detail));
                    }
                    Verdict::Decision { section, .. } => {
                        let _ = writeln!(out, "      see {}", for_terminal(section));
                    }
                    _ => {}
                }
            }
        }
        out
    }

    /// The JSON report: the run, its totals, every outcome (both answers for all but
    /// agreements), and the differences as `cases` for `--replay`.
    pub fn json(&self) -> Value {
        let [agrees, decisions, differences, not_compared] = Self::counts(self.outcomes.iter());
        let by_model: serde_json::Map<String, Value> = self
            .by_model()
            .into_iter()
            .map(|(m, c)| (m.to_owned(), counts_json(c)))
            .collect();
        let outcomes: Vec<Value> = self
            .outcomes
            .iter()
            .map(|o| {
                let mut v = json!({
                    "n": o.n,
                    "request": o.case,
                    "describe": o.case.describe(),
                    "verdict": o.verdict,
                    "status": {"reference": o.reference.status(), "emulator": o.emulator.status()},
                });
                if o.verdict != Verdict::Agrees {
                    v["reference"] = answer_json(&o.reference);
                    v["emulator"] = answer_json(&o.emulator);
                }
                v
            })
            .collect();
        json!({
            "reference": {"url": self.reference, "kind": kind_name(self.kind)},
            "project": self.project,
            "resource": self.resource,
            "seed": self.seed,
            "planned": self.planned,
            "sent": self.outcomes.len(),
            "interrupted": self.interrupted,
            "totals": counts_json([agrees, decisions, differences, not_compared]),
            "by_model": by_model,
            "outcomes": outcomes,
            "cases": self.differences().map(|o| &o.case).collect::<Vec<_>>(),
        })
    }

    /// JUnit XML: a test case per request, named with its model; a difference fails with both
    /// answers; a request the reference did not answer is skipped; a decision passes, its
    /// section in the case's output.
    pub fn junit(&self) -> String {
        let [_, _, failures, skipped] = Self::counts(self.outcomes.iter());
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuites name=\"svc emulator verify\" tests=\"{n}\" failures=\"{failures}\" skipped=\"{skipped}\">\n  \
             <testsuite name=\"svc emulator verify: {}\" tests=\"{n}\" failures=\"{failures}\" skipped=\"{skipped}\">",
            xml(&format!("{} against {}", self.resource, self.reference)),
            n = self.outcomes.len(),
        );
        for o in &self.outcomes {
            let _ = write!(
                out,
                "    <testcase classname=\"verify.{}\" name=\"#{} {}\"",
                xml(o.case.subject()),
                o.n,
                xml(&o.case.describe())
            );
            match &o.verdict {
                Verdict::Agrees => out.push_str("/>\n"),
                Verdict::Decision { what, section } => {
                    let _ = writeln!(
                        out,
                        ">\n      <system-out>{}</system-out>\n    </testcase>",
                        xml(&format!("documented decision: {what} ({section})"))
                    );
                }
                Verdict::NotCompared { why } => {
                    let _ = writeln!(
                        out,
                        ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                        xml(&format!("no answer from the reference: {why}"))
                    );
                }
                Verdict::Difference { class, detail } => {
                    let _ = writeln!(
                        out,
                        ">\n      <failure message=\"{}\" type=\"difference\">{}</failure>\n    </testcase>",
                        xml(class),
                        xml(&format!(
                            "{detail}\n\nreference: {}\n\nemulator: {}",
                            answer_text(&o.reference),
                            answer_text(&o.emulator)
                        ))
                    );
                }
            }
        }
        out.push_str("  </testsuite>\n</testsuites>\n");
        out
    }

    /// One HTML page, with nothing to fetch: the totals, filters by verdict and model, and
    /// each request with both answers side by side.
    pub fn html(&self) -> String {
        let [agrees, decisions, differences, not_compared] = Self::counts(self.outcomes.iter());
        let mut rows = String::new();
        for o in &self.outcomes {
            let note = match &o.verdict {
                Verdict::Agrees => String::new(),
                Verdict::Decision { what, section } => format!("{what} ({section})"),
                Verdict::Difference { class, detail } => format!("{class}: {detail}"),
                Verdict::NotCompared { why } => why.clone(),
            };
            let _ = writeln!(
                rows,
                "<tr data-verdict=\"{v}\" data-model=\"{m}\"><td>{n}</td><td class=\"{v}\">{v}</td><td>{m}</td>\
                 <td><details><summary><code>{req}</code>{note}</summary><div class=\"pair\">\
                 <section><h3>reference {rs}</h3><pre>{rb}</pre></section>\
                 <section><h3>emulator {ms}</h3><pre>{mb}</pre></section></div></details></td></tr>",
                v = o.verdict.name(),
                m = html(o.case.subject()),
                n = o.n,
                req = html(&o.case.describe()),
                note = if note.is_empty() {
                    String::new()
                } else {
                    format!("<span class=\"note\">{}</span>", html(&note))
                },
                rs = status_text(&o.reference),
                ms = status_text(&o.emulator),
                rb = html(&answer_text(&o.reference)),
                mb = html(&answer_text(&o.emulator)),
            );
        }
        let models: String = self
            .by_model()
            .keys()
            .map(|m| format!("<option>{}</option>", html(m)))
            .collect();
        format!(
            r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc emulator verify: {resource}</title>
<style>
body{{font:14px/1.4 system-ui,sans-serif;margin:1rem;color:#111}}
table{{border-collapse:collapse;width:100%}} td{{border-top:1px solid #ddd;padding:.3rem;vertical-align:top}}
.agrees{{color:#176b2c}} .decision{{color:#7a5a00}} .difference{{color:#b00020;font-weight:bold}} .not_compared{{color:#555}}
.pair{{display:flex;gap:1rem;flex-wrap:wrap}} .pair section{{flex:1 1 20rem;min-width:0}}
pre{{background:#f6f6f6;padding:.5rem;overflow:auto;max-height:30rem;white-space:pre-wrap;word-break:break-word}}
summary{{cursor:pointer}} .note{{display:block;margin:.2rem 0 0}} label{{margin-right:1rem}}
</style></head><body>
<h1>svc emulator verify</h1>
<p>{count} requests to the resource <code>{resource}</code> of project <code>{project}</code>, against {reference} ({kind}){stopped}:
<span class="agrees">{agrees} agree</span>, <span class="decision">{decisions} documented decisions</span>,
<span class="difference">{differences} differences</span>, <span class="not_compared">{not_compared} not compared</span>.</p>
<p><label>Verdict <select id="verdict"><option value="">all</option><option>agrees</option><option>decision</option><option>difference</option><option>not_compared</option></select></label>
<label>Model <select id="model"><option value="">all</option>{models}</select></label></p>
<table><thead><tr><th>#</th><th>verdict</th><th>model</th><th>request and answers</th></tr></thead><tbody>
{rows}</tbody></table>
<script>
const verdict = document.getElementById("verdict"), model = document.getElementById("model");
function apply() {{
  for (const row of document.querySelectorAll("tbody tr")) {{
    row.hidden = (verdict.value && row.dataset.verdict !== verdict.value) || (model.value && row.dataset.model !== model.value);
  }}
}}
verdict.addEventListener("change", apply); model.addEventListener("change", apply);
</script></body></html>
"#,
            resource = html(&self.resource),
            project = html(&self.project),
            reference = html(&self.reference),
            kind = kind_name(self.kind),
            count = self.outcomes.len(),
            stopped = if self.interrupted {
                " (interrupted)"
            } else {
                ""
            },
        )
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Service => "service",
        Kind::Engine => "engine",
    }
}

fn counts_json([agrees, decision, difference, not_compared]: [usize; 4]) -> Value {
    json!({"agrees": agrees, "decision": decision, "difference": difference, "not_compared": not_compared})
}

/// An answer in the JSON report: its status and body (JSON when it is, else text).
fn answer_json(answer: &Answer) -> Value {
    match answer {
        Answer::Http { status, body } => {
            let body = serde_json::from_slice(body)
                .unwrap_or_else(|_| Value::String(truncated(&String::from_utf8_lossy(body))));
            json!({"status": status, "body": body})
        }
        Answer::Failed(why) => json!({"failed": why}),
    }
}

/// An answer for people: the body, indented when it is JSON, cut at 20,000 characters.
fn answer_text(answer: &Answer) -> String {
    match answer {
        Answer::Http { body, .. } => match serde_json::from_slice::<Value>(body) {
            Ok(v) => truncated(&serde_json::to_string_pretty(&v).unwrap_or_default()),
            Err(_) => truncated(&String::from_utf8_lossy(body)),
        },
        Answer::Failed(why) => format!("no answer: {why}"),
    }
}

fn status_text(answer: &Answer) -> String {
    answer
        .status()
        .map_or_else(|| "(no answer)".to_owned(), |s| s.to_string())
}

fn truncated(s: &str) -> String {
    const MAX: usize = 20_000;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}\n... ({} more bytes)", &s[..i], s.len() - i),
        None => s.to_owned(),
    }
}

/// Text in HTML.
fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Text in XML: escaped, and every character XML 1.0 cannot hold (the C0 controls but tab and
/// line breaks, U+FFFE and U+FFFF) or discourages (DEL and the C1 controls) replaced by U+FFFD,
/// so that a CI system reads the whole report.
fn xml(s: &str) -> String {
    html(s)
        .chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            '\u{fffe}' | '\u{ffff}' => '\u{fffd}',
            c if c.is_control() => '\u{fffd}',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::case::Op;

    fn run() -> Run {
        let case = |model: &str| Case::read(Op::List, model, vec![("a".into(), "<b>&".into())]);
        let ok = Answer::Http {
            status: 200,
            body: br#"{"count":1}"#.to_vec(),
        };
        let other = Answer::Http {
            status: 200,
            body: br#"{"count":2}"#.to_vec(),
        };
        Run {
            reference: "http://127.0.0.1:9".to_owned(),
            kind: Kind::Engine,
            project: "p".to_owned(),
            resource: "shop".to_owned(),
            seed: Some(1),
            planned: 3,
            interrupted: false,
            outcomes: vec![
                Outcome {
                    n: 1,
                    case: case("books"),
                    reference: ok.clone(),
                    emulator: ok.clone(),
                    verdict: Verdict::Agrees,
                },
                Outcome {
                    n: 2,
                    case: case("books"),
                    reference: ok.clone(),
                    emulator: other,
                    verdict: Verdict::Difference {
                        class: "list: value at /count".into(),
                        detail: "reference 1, emulator 2".into(),
                    },
                },
                Outcome {
                    n: 3,
                    case: case("authors"),
                    reference: Answer::Failed("timed out".into()),
                    emulator: ok,
                    verdict: Verdict::NotCompared {
                        why: "timed out".into(),
                    },
                },
            ],
        }
    }

    #[test]
    fn the_summary_counts_by_verdict_and_model_and_names_each_difference() {
        let text = run().summary();
        assert!(text.starts_with("verify: 3 requests against http://127.0.0.1:9 (engine): 1 agree, 0 documented decisions, 1 differences, 1 not compared"), "{text}");
        assert!(
            text.contains("  books                          1         0           1            0"),
            "{text}"
        );
        assert!(
            text.contains("1 x list: value at /count\n      first: #2 GET books?a=%3Cb%3E%26"),
            "{text}"
        );
    }

    #[test]
    fn the_json_report_keeps_the_differences_as_cases() {
        let report = run().json();
        assert_eq!(report["totals"]["difference"], 1);
        assert_eq!(report["cases"].as_array().unwrap().len(), 1);
        assert_eq!(report["outcomes"][1]["emulator"]["body"]["count"], 2);
        assert!(report["outcomes"][0].get("emulator").is_none());
        let cases: Vec<Case> = serde_json::from_value(report["cases"].clone()).unwrap();
        assert_eq!(cases[0].subject(), "books");
    }

    #[test]
    fn junit_has_a_case_per_request_and_escapes_what_it_quotes() {
        let xml = run().junit();
        assert!(xml.contains("tests=\"3\" failures=\"1\" skipped=\"1\""));
        assert_eq!(xml.matches("<testcase ").count(), 3);
        assert!(xml.contains("classname=\"verify.books\" name=\"#2 GET books?a=%3Cb%3E%26\""));
        assert!(xml.contains("<failure message=\"list: value at /count\""));
        assert!(xml.contains("<skipped message=\"no answer from the reference: timed out\"/>"));
    }

    #[test]
    fn junit_stays_xml_and_the_summary_inert_whatever_the_reference_sent() {
        let mut run = run();
        let Verdict::Difference { class, detail } = &mut run.outcomes[1].verdict else {
            unreachable!()
        };
        *class = "list: value at /\u{1b}]0;owned\u{7}x".into();
        *detail = "reference \u{fffe}\u{ffff}\u{0}\u{85} \u{1b}[2J, emulator 2\nforged".into();
        run.outcomes[1].reference = Answer::Http {
            status: 200,
            body: "{\"k\u{fffe}\":\"v\u{ffff}\u{1}\"}".as_bytes().to_vec(),
        };
        let xml = run.junit();
        let bad = |c: char| {
            matches!(c, '\u{fffe}' | '\u{ffff}' | '\u{85}')
                || (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        };
        assert!(!xml.chars().any(bad), "{xml:?}");
        assert!(
            xml.contains("reference \u{fffd}\u{fffd}\u{fffd}\u{fffd}"),
            "{xml}"
        );
        let summary = run.summary();
        assert!(
            !summary.contains('\u{1b}') && !summary.contains('\u{7}'),
            "{summary:?}"
        );
        assert!(summary.contains("\\u{1b}]0;owned"), "{summary}");
        assert!(!summary.contains("\nforged"), "{summary}");
    }

    #[test]
    fn the_page_is_self_contained_and_escapes_what_it_shows() {
        let page = run().html();
        assert!(
            !page.contains("http://") || !page.contains("src="),
            "nothing to fetch"
        );
        assert!(!page.contains("<script src") && !page.contains("<link"));
        assert!(page.contains("data-verdict=\"difference\" data-model=\"books\""));
        assert!(page.contains("<option>authors</option><option>books</option>"));
        assert!(!page.contains("<b>&"));
    }
}
