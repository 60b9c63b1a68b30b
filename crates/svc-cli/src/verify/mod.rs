//! `svc emulator verify`: whether the emulator answers as the service (or the data engine)
//! does, on the user's own schema and data.
//!
//! It starts an emulator in this process from the user's config (and a second one in lenient
//! mode, which judges strict refusals), reads the resource's models from it and some of each
//! model's records, draws requests from them ([`generate`]), sends each to the reference and to
//! the emulator, one at a time at a gentle rate, and judges each pair of answers
//! ([`compare`]). The reports ([`report`]) name every difference; the differences are saved
//! as cases that `--replay` sends again. Nothing is sent to the reference before the inputs are
//! read and checked (exit 2), and only reads unless `--writes` (then the emulator's copy is
//! put back after the run). Ctrl-C stops the run and writes what it has.

pub mod case;
mod compare;
mod generate;
mod mask;
mod reads;
mod report;

use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use http::header;
use serde_json::{Map, Value};
use svc_api::transport::{HyperTransport, Transport};
use svc_emulator::{Emulator, EmulatorConfig, ProjectsConfig};

use crate::args::VerifyArgs;
use crate::exit::Failure;
use crate::progress;
use crate::signals;
use case::{Case, Kind, Place};
use compare::{Answer, Verdict, judge, needs_lenient};
use generate::Sampled;
use report::{Outcome, Run};

/// How many records of each model the generator draws its values from.
const SAMPLE: usize = 50;

/// The snapshot a `--writes` run takes of the emulator's data, and puts back after.
const BEFORE: &str = "svc-verify-before";

/// What the checked inputs say to do.
struct Plan {
    projects: ProjectsConfig,
    project: String,
    environment: Option<String>,
    resource: String,
    /// The resource's static token, for the emulator.
    token: String,
    reference: Place,
    /// The reference's URL as reports show it (no userinfo).
    reference_shown: String,
    reference_auth: Option<String>,
    /// The secrets no report or message may hold.
    masks: mask::Masks,
    replay: Option<Vec<Case>>,
}

/// Runs `svc emulator verify`.
pub async fn run(args: VerifyArgs) -> Result<(), Failure> {
    let plan = plan(&args)?;
    let strict = start(&plan, args.lenient).await?;
    let lenient = if args.lenient {
        None
    } else {
        Some(start(&plan, true).await?)
    };
    let result = verify(&args, plan, &strict, lenient.as_ref()).await;
    strict.shutdown().await;
    if let Some(lenient) = lenient {
        lenient.shutdown().await;
    }
    result
}

/// Reads and checks every input; nothing is sent yet.
fn plan(args: &VerifyArgs) -> Result<Plan, Failure> {
    let mut projects = ProjectsConfig::load(&args.config).map_err(|e| {
        Failure::usage_hint(
            format!("the config {}: {e}", args.config.display()),
            "give the emulator's config file (JSON, as `svc emulator --config` reads it)",
        )
    })?;
    let at = match &args.project {
        Some(name) => projects
            .projects
            .iter()
            .position(|p| &p.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = projects.projects.iter().map(|p| p.name.as_str()).collect();
                Failure::Usage(format!(
                    "the config has no project {name:?}; its projects: {}",
                    names.join(", ")
                ))
            })?,
        None => 0,
    };
    // The project checked is the emulator's default one: its start line names it.
    let chosen = projects.projects.remove(at);
    projects.projects.insert(0, chosen);
    if args.writes {
        // The emulator's snapshots hold the resources its resets put back: with writes, this
        // one too, so that the run's copy is put back after it.
        for resource in &mut projects.projects[0].resources {
            if resource.name == args.resource {
                *resource = resource.clone().reset(true);
            }
        }
    }
    let project = &projects.projects[0];
    let Some(resource) = project.resources.iter().find(|r| r.name == args.resource) else {
        let names: Vec<&str> = project.resources.iter().map(|r| r.name.as_str()).collect();
        return Err(Failure::Usage(format!(
            "project {:?} of the config has no resource {:?}; its resources: {}",
            project.name,
            args.resource,
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )));
    };
    if !(args.rate.is_finite() && args.rate > 0.0) {
        return Err(Failure::Usage(format!(
            "--rate {} is not a number of requests a second above 0",
            args.rate
        )));
    }
    if args.requests == 0 && args.replay.is_none() {
        return Err(Failure::Usage(
            "--requests 0 sends nothing: give 1 or more".to_owned(),
        ));
    }
    if args.timeout == 0 {
        return Err(Failure::Usage(
            "--timeout 0 waits for nothing: give 1 or more seconds".to_owned(),
        ));
    }
    let base = reference_base(&args.reference, args.reference_kind)?;
    for file in [&args.json, &args.junit, &args.html].into_iter().flatten() {
        writable(file)?;
    }
    writable(&args.cases)?;
    let replay = args.replay.as_deref().map(read_cases).transpose()?;
    if let Some(cases) = &replay {
        only_reads_unless_asked(cases, args.writes)?;
    }
    if let Some(token) = &args.reference_token {
        crate::verbose::secret(token);
    }
    let (reference_shown, mut secrets) = mask::without_userinfo(&base);
    for secret in &secrets {
        crate::verbose::secret(secret);
    }
    secrets.extend(args.reference_token.iter().cloned());
    secrets.push(resource.token.clone());
    Ok(Plan {
        reference_shown,
        masks: mask::Masks::new(secrets.iter().map(String::as_str)),
        project: project.name.clone(),
        environment: args.environment.clone(),
        resource: resource.name.clone(),
        token: resource.token.clone(),
        reference: Place {
            base,
            kind: args.reference_kind,
            project: project.name.clone(),
            environment: String::new(),
            resource: resource.name.clone(),
        },
        reference_auth: args.reference_token.as_ref().map(|t| format!("Bearer {t}")),
        projects,
        replay,
    })
}

/// The reference's base URL without a trailing `/` (and without the engine's `/api`, which
/// the engine's paths carry).
fn reference_base(url: &str, kind: Kind) -> Result<String, Failure> {
    let hint =
        "give the reference's base URL, e.g. https://data.example.com or http://127.0.0.1:8888";
    // Messages quote the URL without its userinfo (a password).
    let shown = mask::without_userinfo(url).0;
    let uri: http::Uri = url.parse().map_err(|e| {
        Failure::usage_hint(format!("--reference {shown:?} is not a URL: {e}"), hint)
    })?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
        return Err(Failure::usage_hint(
            format!("--reference {shown:?} is not an http:// or https:// URL"),
            hint,
        ));
    }
    if uri.query().is_some() {
        return Err(Failure::usage_hint(
            format!("--reference {shown:?} has a query"),
            hint,
        ));
    }
    let base = url.trim_end_matches('/');
    Ok(match kind {
        Kind::Engine => base.strip_suffix("/api").unwrap_or(base).to_owned(),
        Kind::Service => base.to_owned(),
    })
}

/// Fails now, before anything is sent, when `file` could not be written at the end.
fn writable(file: &Path) -> Result<(), Failure> {
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(Failure::Usage(format!(
            "cannot write {}: the folder {} does not exist",
            file.display(),
            dir.display()
        )));
    }
    crate::private_file::check_target(file)
        .map_err(|why| Failure::Usage(format!("cannot write {}: {why}", file.display())))
}

/// The cases of a cases file or of a `--json` report (its `cases`).
fn read_cases(file: &Path) -> Result<Vec<Case>, Failure> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", file.display())))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::Usage(format!("{} is not JSON: {e}", file.display())))?;
    let cases = value.get("cases").cloned().unwrap_or(Value::Null);
    let cases: Vec<Case> = serde_json::from_value(cases).map_err(|e| {
        Failure::usage_hint(
            format!("{} holds no cases: {e}", file.display()),
            "give a cases file that `svc emulator verify` wrote, or its --json report",
        )
    })?;
    if cases.is_empty() {
        return Err(Failure::Usage(format!(
            "{} holds no cases to send",
            file.display()
        )));
    }
    Ok(cases)
}

/// Refuses, before anything is sent, cases that name no model or key where they need one (or
/// name `.` or `..`, which a server may read as another route), and, without `--writes`, every
/// case that could change the reference's data, naming each.
fn only_reads_unless_asked(cases: &[Case], writes: bool) -> Result<(), Failure> {
    for (i, case) in cases.iter().enumerate() {
        if let Err(why) = case.check() {
            return Err(Failure::usage_hint(
                format!(
                    "case #{} ({}) cannot be sent: {why}",
                    i + 1,
                    case.describe()
                ),
                "give a cases file that `svc emulator verify` wrote, or its --json report",
            ));
        }
    }
    if writes {
        return Ok(());
    }
    let refused: Vec<String> = cases
        .iter()
        .enumerate()
        .filter_map(|(i, case)| {
            let why = reads::write_reason(case)?;
            Some(format!("  #{} {} ({why})", i + 1, case.describe()))
        })
        .collect();
    if refused.is_empty() {
        return Ok(());
    }
    Err(Failure::usage_hint(
        format!(
            "{} of the {} cases may change the reference's data, and --writes was not given; \
             nothing was sent:\n{}",
            refused.len(),
            cases.len(),
            refused.join("\n")
        ),
        "add --writes only if the reference is scratch (its data changes), or remove those cases",
    ))
}

/// An emulator of the plan's projects, on a free loopback port, its data in memory.
async fn start(plan: &Plan, lenient: bool) -> Result<Emulator, Failure> {
    let config = EmulatorConfig::default()
        .projects(plan.projects.clone())
        .lenient(lenient);
    let emulator = Emulator::start(config).await.map_err(|e| {
        Failure::usage_hint(
            format!("the emulator did not start from the config: {e}"),
            "check that the config's database is there and reachable",
        )
    })?;
    for warning in emulator.warnings() {
        eprintln!("svc emulator verify: warning: {warning}");
    }
    Ok(emulator)
}

/// Sends requests and answers one at a time.
struct Sender {
    transport: HyperTransport,
}

impl Sender {
    fn new(timeout: Duration) -> Result<Sender, Failure> {
        let transport = HyperTransport::builder()
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .request_timeout(timeout)
            .build()
            .map_err(|e| Failure::Other(format!("cannot set up HTTP: {e}")))?;
        Ok(Sender { transport })
    }

    async fn send(&self, case: &Case, place: &Place, auth: Option<&str>) -> Answer {
        let body = match &case.body {
            Some(b) => Bytes::from(b.to_string()),
            None => Bytes::new(),
        };
        let mut request = http::Request::builder()
            .method(case.method())
            .uri(case.url(place))
            .header(header::ACCEPT, "application/json");
        if let Some(auth) = auth {
            request = request.header(header::AUTHORIZATION, auth);
        }
        if !body.is_empty() {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        let request = match request.body(body) {
            Ok(r) => r,
            Err(e) => return Answer::Failed(format!("cannot write the request: {e}")),
        };
        match self.transport.send(request).await {
            Ok(response) => Answer::Http {
                status: response.status().as_u16(),
                body: response.into_body().to_vec(),
            },
            Err(e) => Answer::Failed(e.to_string()),
        }
    }
}

/// Where the resource is on an emulator.
fn emulator_place(emulator: &Emulator, plan: &Plan) -> Place {
    Place {
        base: emulator.api_base_url().to_owned(),
        kind: Kind::Service,
        project: plan.project.clone(),
        environment: emulator.environment().to_string(),
        resource: plan.resource.clone(),
    }
}

async fn verify(
    args: &VerifyArgs,
    mut plan: Plan,
    strict: &Emulator,
    lenient: Option<&Emulator>,
) -> Result<(), Failure> {
    let sender = Sender::new(Duration::from_secs(args.timeout))?;
    let here = emulator_place(strict, &plan);
    let judge_at = lenient.map(|l| emulator_place(l, &plan));
    plan.reference.environment = plan
        .environment
        .clone()
        .unwrap_or_else(|| here.environment.clone());
    let auth = plan.token.clone();
    let cases = match plan.replay.take() {
        Some(cases) => cases,
        None => {
            let models = strict
                .models(&plan.project, &plan.resource)
                .unwrap_or_default();
            if models.is_empty() {
                return Err(Failure::Usage(format!(
                    "the resource {:?} has no models (no tables the emulator can serve)",
                    plan.resource
                )));
            }
            let mut sampled = Vec::with_capacity(models.len());
            for info in models {
                let rows = sample(&sender, &here, &auth, &info.name).await;
                sampled.push(Sampled::new(info, rows));
            }
            let cases = generate::generate(&sampled, args.seed, args.requests, args.writes);
            only_reads_unless_asked(&cases, args.writes)?;
            cases
        }
    };
    if args.writes {
        strict.snapshot(BEFORE).await.map_err(|e| {
            Failure::Other(format!(
                "cannot keep the emulator's data before the writes: {e}"
            ))
        })?;
    }
    let run = send_all(args, &plan, &sender, &here, judge_at.as_ref(), cases).await;
    if args.writes {
        strict.restore(BEFORE).await.map_err(|e| {
            Failure::Other(format!(
                "cannot put the emulator's data back after the writes: {e}"
            ))
        })?;
    }
    let (run, stopped) = run?;
    finish(args, &run)?;
    if let Some(signal) = stopped {
        return Err(Failure::Interrupted(signal));
    }
    if run.differences().next().is_some() {
        return Err(Failure::Differ);
    }
    Ok(())
}

/// The first records of `model` on the emulator; none when it cannot list them (a stored
/// value the engine cannot read fails every page it is on): then the requests on the model
/// draw no values from its rows, and the run says so.
async fn sample(
    sender: &Sender,
    here: &Place,
    token: &str,
    model: &str,
) -> Vec<Map<String, Value>> {
    let case = Case::read(
        case::Op::List,
        model,
        vec![("_per_page".to_owned(), SAMPLE.to_string())],
    );
    let answer = sender.send(&case, here, Some(token)).await;
    let read = match &answer {
        Answer::Http { status: 200, body } => serde_json::from_slice::<Value>(body).ok(),
        _ => None,
    };
    let Some(Value::Array(rows)) = read.map(|mut v| v["results"].take()) else {
        eprintln!(
            "svc emulator verify: note: the emulator did not list the model {model:?} ({}: {}); \
             its requests draw no values from its rows",
            answer
                .status()
                .map_or("no answer".to_owned(), |s| s.to_string()),
            compare::short(&answer.text())
        );
        return Vec::new();
    };
    rows.into_iter()
        .filter_map(|r| match r {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .collect()
}

/// Sends every case to the reference and the emulator, at the rate asked, until the end or
/// Ctrl-C (then the signal is returned beside what was done).
async fn send_all(
    args: &VerifyArgs,
    plan: &Plan,
    sender: &Sender,
    here: &Place,
    judge_at: Option<&Place>,
    cases: Vec<Case>,
) -> Result<(Run, Option<signals::Signal>), Failure> {
    let mut run = Run {
        reference: plan.reference_shown.clone(),
        kind: plan.reference.kind,
        project: plan.project.clone(),
        resource: plan.resource.clone(),
        seed: args.replay.is_none().then_some(args.seed),
        planned: cases.len(),
        interrupted: false,
        outcomes: Vec::with_capacity(cases.len()),
    };
    let live = std::io::stderr().is_terminal();
    let mut pace = tokio::time::interval(Duration::from_secs_f64(1.0 / args.rate));
    pace.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut stop = signals::interrupted();
    let mut differ = 0;
    let reference_auth = plan.reference_auth.as_deref();
    for (i, case) in cases.into_iter().enumerate() {
        let step = async {
            pace.tick().await;
            let reference = sender.send(&case, &plan.reference, reference_auth).await;
            if i == 0 {
                refuse_unusable_reference(&reference, plan)?;
            }
            let emulator = sender.send(&case, here, Some(&plan.token)).await;
            let lenient = match judge_at {
                Some(place) if needs_lenient(&case, &reference, &emulator) => {
                    Some(sender.send(&case, place, Some(&plan.token)).await)
                }
                _ => None,
            };
            let verdict = judge(&case, &reference, &emulator, lenient.as_ref());
            Ok::<_, Failure>((reference, emulator, verdict))
        };
        let (reference, emulator, verdict) = tokio::select! {
            signal = &mut stop => {
                run.interrupted = true;
                if live {
                    progress::clear();
                }
                return Ok((run, Some(signal)));
            }
            done = step => done?,
        };
        if matches!(verdict, Verdict::Difference { .. }) {
            differ += 1;
        }
        // A reference may echo a credential (its Authorization header, its URL): masked
        // before anything keeps it.
        run.outcomes.push(plan.masks.outcome(Outcome {
            n: i + 1,
            case,
            reference,
            emulator,
            verdict,
        }));
        if live {
            progress::draw(
                &format!("verify: {}/{} sent, {differ} differ", i + 1, run.planned),
                false,
            );
        }
    }
    if live {
        progress::clear();
    }
    Ok((run, None))
}

/// The first answer of the reference says whether it can be used at all: no answer, or a
/// refusal of the credentials, stops the run (bad input: exit 2).
fn refuse_unusable_reference(answer: &Answer, plan: &Plan) -> Result<(), Failure> {
    let url = &plan.reference_shown;
    match plan.masks.answer(answer.clone()) {
        Answer::Failed(why) => Err(Failure::usage_hint(
            format!("the reference at {url} gave no answer: {why}"),
            "check --reference (and that the service or engine is running)",
        )),
        Answer::Http {
            status: 401 | 403, ..
        } => Err(Failure::usage_hint(
            format!(
                "the reference at {url} refused the credentials ({})",
                answer.status().unwrap_or_default()
            ),
            "give --reference-token (or SVC_VERIFY_REFERENCE_TOKEN): an API key or the resource's token",
        )),
        _ => Ok(()),
    }
}

/// Writes the reports and the cases, then prints the summary on stdout (a closed stdout,
/// `| head`, loses only the summary: the files are written first).
fn finish(args: &VerifyArgs, run: &Run) -> Result<(), Failure> {
    // What a reference answered may be private: the owner's only, written whole.
    let write = |file: &PathBuf, text: String| {
        crate::private_file::write(file, text.as_bytes())
            .map_err(|e| Failure::Other(format!("cannot write {}: {e}", file.display())))
    };
    let json = run.json();
    if let Some(file) = &args.json {
        write(file, format!("{json:#}\n"))?;
    }
    if let Some(file) = &args.junit {
        write(file, run.junit())?;
    }
    if let Some(file) = &args.html {
        write(file, run.html())?;
    }
    let mut summary = run.summary();
    let differences = run.differences().count();
    if differences > 0 {
        let cases = serde_json::json!({"cases": json["cases"]});
        write(&args.cases, format!("{cases:#}\n"))?;
        summary.push_str(&format!(
            "{differences} differences saved to {0}: add --replay {0} to send them again\n",
            args.cases.display()
        ));
    }
    let _ = std::io::stdout().lock().write_all(summary.as_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_url_is_checked_and_the_engines_api_prefix_dropped() {
        assert_eq!(
            reference_base("http://127.0.0.1:8888/api/", Kind::Engine).unwrap(),
            "http://127.0.0.1:8888"
        );
        assert_eq!(
            reference_base("https://data.example.com/", Kind::Service).unwrap(),
            "https://data.example.com"
        );
        assert!(reference_base("ftp://x", Kind::Service).is_err());
        assert!(reference_base("data.example.com", Kind::Service).is_err());
        assert!(reference_base("http://x/?a=1", Kind::Service).is_err());
    }
}
