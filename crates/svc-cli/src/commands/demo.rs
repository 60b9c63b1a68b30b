//! `svc demo`: the embedded emulator and a guided tour of the SDK.
//!
//! Every step prints what it does and what came back, so a newcomer sees the SDK's calls and
//! the service's answers side by side.

use std::io::Write as _;
use std::sync::Mutex;

use futures_util::TryStreamExt;
use serde_json::json;
use svc_api::Client;
use svc_api::model::number::Decimal;
use svc_api::model::records::{
    AggregateFunc, AggregateRequest, DateUnit, GroupLookup, GroupRequest, GroupRow, ListQuery,
    Lookup,
};
use svc_api::model::users::NewUser;
use svc_api::model::{PageSettings, UpdatePageSettings};
use svc_emulator::{Emulator, EmulatorConfig};

use crate::args::DemoArgs;
use crate::exit::Failure;
use crate::output;

/// Prints a line of the tour (`println!`'s arguments). A write that fails (stdout closed, as in
/// `svc demo | head`) is kept, not a panic: the tour stops at its next step ([`written`]).
macro_rules! say {
    ($($arg:tt)*) => {
        say(format_args!($($arg)*))
    };
}

/// The first write to stdout that failed, if one did; later lines are not tried.
static WRITE_FAILED: Mutex<Option<std::io::Error>> = Mutex::new(None);

fn say(line: std::fmt::Arguments<'_>) {
    let mut failed = WRITE_FAILED.lock().unwrap_or_else(|e| e.into_inner());
    if failed.is_none()
        && let Err(e) = writeln!(std::io::stdout().lock(), "{line}")
    {
        *failed = Some(e);
    }
}

/// `Err` once a line could not be written: a closed stdout ends the command quietly with
/// success, as every other command does (`output::io`); another failure is reported.
fn written() -> Result<(), Failure> {
    match WRITE_FAILED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        Some(e) => Err(output::io(e)),
        None => Ok(()),
    }
}

/// Begins the tour's next part; `Err` when a line of the last one could not be written (see
/// [`written`]): the tour stops there.
fn step(n: &mut u32, title: &str) -> Result<(), Failure> {
    written()?;
    *n += 1;
    say!("\n{n}. {title}");
    Ok(())
}

fn show(label: &str, value: impl std::fmt::Display) {
    say!("   {label:<22} {value}");
}

pub async fn run(args: DemoArgs) -> Result<(), Failure> {
    say!("svc is the REST API of a low-code administration platform: an application host");
    say!(
        "(projects, page settings, an HTTP proxy) and a data host (records, read-only SQL, users,"
    );
    say!("teams, actions, workflows, user sessions). This demo starts svc-emulator, a local");
    say!("stand-in for both hosts, in memory, and tours the Rust SDK (svc-api) against it: each");
    say!("call, and what came back.");
    // Access tokens live 32 s here (5 min by default), so the tour can show a refresh: the SDK
    // refreshes when an expiry is less than 30 s away.
    let lifetimes = svc_emulator::TokenLifetimes {
        access: DEMO_ACCESS_TTL,
        ..svc_emulator::TokenLifetimes::default()
    };
    let emulator = Emulator::start(EmulatorConfig::default().token_lifetimes(lifetimes))
        .await
        .map_err(|e| Failure::Other(format!("the emulator did not start: {e}")))?;
    let mut n = 0;
    step(&mut n, "Start the emulator (in memory, loopback only)")?;
    show("data host", emulator.api_base_url());
    show("application host", emulator.app_base_url());
    show("project", emulator.project());
    show("environment", emulator.environment());

    let client = Client::builder_for(&emulator).build()?;
    say!("   let client = svc_api::Client::builder_for(&emulator).build()?;");

    tour_projects(&client, &mut n).await?;
    tour_pages(&client, &mut n).await?;
    if emulator.resource_tokens().contains_key("shop") {
        tour_records(&client, &mut n).await?;
        tour_sql(&client, &mut n).await?;
        tour_actions(&client, &mut n).await?;
    }
    tour_users(&client, &mut n).await?;
    tour_sessions(&emulator, &mut n).await?;
    next_steps(&emulator, args.keep_running);
    written()?;
    if args.keep_running {
        say!("\nThe emulator keeps running; press Ctrl-C to stop it.");
        written()?;
        let _ = tokio::signal::ctrl_c().await;
    }
    emulator.shutdown().await;
    written()
}

const DEMO_ACCESS_TTL: std::time::Duration = std::time::Duration::from_secs(32);

async fn tour_sessions(emulator: &Emulator, n: &mut u32) -> Result<(), Failure> {
    use svc_api::model::account::RegisterRequest;

    step(
        n,
        "Sessions: register, log in, and use the session for records (no static token)",
    )?;
    let user = Client::builder()
        .project(emulator.project().as_str())
        .api_base_url(emulator.api_base_url())
        .build()?;
    let registered = user
        .account()
        .register(
            &RegisterRequest::new("ana@example.com", "correct horse battery").first_name("Ana"),
        )
        .await?;
    show("registered", registered.result);
    let signed = user
        .account()
        .login("ana@example.com", "correct horse battery")
        .await?;
    show("signed in as", signed.user.email.as_deref().unwrap_or("-"));
    let expires = signed
        .token
        .access_token_expires
        .map(|t| t.to_rfc3339())
        .unwrap_or_default();
    show("access token expires", &expires);
    let page = user
        .records("shop", "orders")
        .list(&ListQuery::new().per_page(1))
        .await?;
    show("orders, via JWT", page.count);

    step(
        n,
        "Sessions: a refresh, 30 s before expiry, once for every waiting request",
    )?;
    // 32 s tokens: after 2.5 s, less than 30 s are left, so the next request refreshes first.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let calls = (0..20).map(|_| {
        let user = user.clone();
        async move { user.records("shop", "products").retrieve(1).await.map(drop) }
    });
    for result in futures_util::future::join_all(calls).await {
        result?;
    }
    let headers = user.account().get_headers().await?.unwrap_or_default();
    let now_sent = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split('.')
                .next_back()
                .unwrap_or_default()
                .chars()
                .take(12)
                .collect::<String>()
        })
        .unwrap_or_default();
    let before = signed
        .token
        .access_token
        .split('.')
        .next_back()
        .unwrap_or_default()
        .chars()
        .take(12)
        .collect::<String>();
    show("refresh calls (server)", refresh_calls(emulator).await?);
    show("token signature", format!("{before}… -> {now_sent}…"));
    user.account().logout()?;
    show(
        "logged out",
        !user.account().is_authenticated().await?.authenticated,
    );
    Ok(())
}

/// The refresh calls the emulator received for the demo project (its emulator-only stats route).
async fn refresh_calls(emulator: &Emulator) -> Result<String, Failure> {
    use svc_api::transport::{HyperTransport, Transport};
    let url = format!(
        "{}/_emulator/projects/{}/stats",
        emulator.api_base_url(),
        emulator.project()
    );
    let request = http::Request::get(url)
        .header(
            http::header::AUTHORIZATION,
            format!("Bearer {}", emulator.api_key()),
        )
        .body(bytes::Bytes::new())
        .map_err(|e| Failure::Other(e.to_string()))?;
    let response = HyperTransport::new()
        .send(request)
        .await
        .map_err(|e| Failure::Other(e.to_string()))?;
    let stats: serde_json::Value = serde_json::from_slice(response.body()).unwrap_or_default();
    Ok(format!(
        "{} for 20 parallel requests",
        stats["refresh_calls"]
    ))
}

async fn tour_projects(client: &Client, n: &mut u32) -> Result<(), Failure> {
    step(n, "Projects: client.projects().current()")?;
    let project = client.projects().current().await?;
    show("name", project.name().unwrap_or("-"));
    let envs: Vec<String> = project
        .environments()
        .into_iter()
        .map(|e| e.unique_name)
        .collect();
    show("environments", envs.join(", "));
    let resources: Vec<String> = project
        .resources()
        .into_iter()
        .map(|r| r.unique_name)
        .collect();
    show(
        "resources",
        if resources.is_empty() {
            "-".to_owned()
        } else {
            resources.join(", ")
        },
    );
    Ok(())
}

async fn tour_pages(client: &Client, n: &mut u32) -> Result<(), Failure> {
    let invalid = |e: serde_json::Error| Failure::Other(e.to_string());
    step(n, "Page settings: create a published page")?;
    let page = PageSettings::new()
        .with("unique_name", "orders")
        .with("name", "Orders")
        .with_params(&json!({"elements": [{"type": "table", "model": "orders"}]}))
        .map_err(invalid)?;
    let created = client.pages().create(&page).await?;
    let uid = created.uid().unwrap_or_default().to_owned();
    show("uid (server-assigned)", &uid);
    show("date_add", created.date_add().unwrap_or("-"));

    step(
        n,
        "Draft: change the page in the draft set only (.draft(true))",
    )?;
    let update = UpdatePageSettings::from_structure(&json!({"elements": [{"type": "chart"}]}))
        .map_err(invalid)?;
    let draft = client.pages().draft(true).update(&uid, &update).await?;
    show("draft params", draft.params_raw().unwrap_or("-"));
    let published = client.pages().get(&uid).await?;
    show("published params", published.params_raw().unwrap_or("-"));

    step(n, "Draft: a page created in the draft set is not published")?;
    let sketch = client
        .pages()
        .draft(true)
        .create(&PageSettings::new().with("unique_name", "sketch"))
        .await?;
    let sketch_uid = sketch.uid().unwrap_or_default().to_owned();
    show(
        "draft pages",
        client.pages().draft(true).list().await?.len(),
    );
    show("published pages", client.pages().list().await?.len());
    match client.pages().get(&sketch_uid).await {
        Err(e) if e.is_not_found() => show("published get", "404 Not Found, as expected"),
        other => show(
            "published get",
            format!("{:?}", other.map(|p| p.uid().map(str::to_owned))),
        ),
    }

    step(n, "Errors say what went wrong: a wrong API key")?;
    let wrong = Client::builder()
        .project(client.project()?.as_str())
        .app_base_url(client.app_base_url())
        .api_key("svc_key_wrong")
        .build()?;
    if let Err(e) = wrong.pages().list().await {
        show("error", e);
    }

    step(n, "Delete both pages")?;
    client.pages().delete(&uid).await?;
    client.pages().draft(true).delete(&sketch_uid).await?;
    show("published pages", client.pages().list().await?.len());
    Ok(())
}

async fn tour_records(client: &Client, n: &mut u32) -> Result<(), Failure> {
    let orders = client.records("shop", "orders");

    step(
        n,
        "Records: one page of paid orders over 100, largest first",
    )?;
    let query = ListQuery::new()
        .eq("status", "paid")
        .filter("total", Lookup::Gt, 100)
        .order_by("-total")
        .per_page(3);
    let page = orders.list(&query).await?;
    show("matching", page.count);
    for order in &page.results {
        show(
            "order",
            json!({"id": order.get("id"), "total": order.get("total"), "status": order.get("status")}),
        );
    }
    show("next page", page.next.as_deref().unwrap_or("-"));

    step(n, "Records: typed, with your own struct")?;
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)] // printed through Debug
    struct Customer {
        id: i64,
        name: String,
        city: Option<String>,
    }
    let customers = client.records("shop", "customers").typed::<Customer>();
    let first = customers
        .list(&ListQuery::new().order_by("id").per_page(2))
        .await?;
    for c in &first.results {
        show("customer", format!("{c:?}"));
    }

    step(n, "Aggregate: revenue of paid orders")?;
    // A sum of a REAL column comes as a numeric string ("123456.78"): Decimal reads it (and a
    // JSON number), keeping the text.
    let revenue: Option<Decimal> = orders
        .aggregate(
            &AggregateRequest::new(AggregateFunc::Sum).column("total"),
            &ListQuery::new().eq("status", "paid"),
        )
        .await?;
    show("sum(total)", format!("{:.2}", revenue.unwrap_or_default()));

    step(n, "Group: orders per status, and per month")?;
    let per_status: Vec<GroupRow<String, u64>> = orders
        .group(
            &GroupRequest::new("status", AggregateFunc::Count),
            &ListQuery::new(),
        )
        .await?;
    for row in &per_status {
        show(&row.group, row.y_func);
    }
    let per_month: Vec<GroupRow<String, u64>> = orders
        .group(
            &GroupRequest::new("ordered_on", AggregateFunc::Count)
                .x_lookup(GroupLookup::Date(DateUnit::Month)),
            &ListQuery::new(),
        )
        .await?;
    if let (Some(first), Some(last)) = (per_month.first(), per_month.last()) {
        show(
            "months",
            format!("{} ({} .. {})", per_month.len(), first.group, last.group),
        );
    }

    step(
        n,
        "Stream: every order across pages (fetched ahead while you work)",
    )?;
    let total: usize = orders
        .stream(ListQuery::new().per_page(1000))?
        .try_fold(0, |n, _| async move { Ok(n + 1) })
        .await?;
    show("orders streamed", total);

    // A product, not an order: an order's `ordered_on` is a DATE column, which the data engine
    // cannot write (it answers 400), and it is NOT NULL.
    step(n, "Create, update, delete a record")?;
    let products = client.records("shop", "products");
    let created = products
        .create(&json!({"sku": "SKU-DEMO", "name": "Demo lamp", "price": 9.5}))
        .await?;
    let id = created.get("id").cloned().unwrap_or_default();
    show("created", &id);
    let updated = products
        .update(id.to_string(), &json!({"name": "Demo chair"}))
        .await?;
    show(
        "updated name",
        updated.get("name").cloned().unwrap_or_default(),
    );
    products.delete(id.to_string()).await?;
    show("deleted", &id);
    Ok(())
}

async fn tour_sql(client: &Client, n: &mut u32) -> Result<(), Failure> {
    step(
        n,
        "SQL: a read-only query with a bound parameter, rows as your own struct",
    )?;
    #[derive(Debug, serde::Deserialize)]
    struct Spender {
        name: String,
        orders: u64,
        // REAL values may come as numeric strings ("1234.5"): the helper reads both forms.
        #[serde(with = "svc_api::model::number::f64_or_string")]
        spent: f64,
    }
    let query = "select c.name, count(*) as orders, round(sum(o.total), 2) as spent
                 from orders o join customers c on c.id = o.customer_id
                 where c.city = :city and o.status = 'paid'
                 group by c.id order by spent desc limit 3";
    say!("   client.sql(\"shop\").query(..).bind(\"city\", \"Paris\").rows::<Spender>()");
    let top: Vec<Spender> = client
        .sql("shop")
        .query(query)
        .bind("city", "Paris")
        .rows()
        .await?;
    for s in &top {
        show(
            "top spender in Paris",
            format!("{} ({} orders, {:.2})", s.name, s.orders, s.spent),
        );
    }

    step(n, "SQL: anything that could write is refused by the engine")?;
    match client
        .sql("shop")
        .query("select 1; delete from orders")
        .send()
        .await
    {
        Err(e) => show("error", e),
        Ok(_) => show("error", "none (unexpected)"),
    }
    Ok(())
}

async fn tour_actions(client: &Client, n: &mut u32) -> Result<(), Failure> {
    use svc_api::serde_json::json;

    step(
        n,
        "Actions: client.action(\"shop\", \"refund\").execute(..)",
    )?;
    let refunded = client
        .action("shop", "refund")
        .execute(json!({"id": 7}))
        .await?;
    show("refunded", refunded);

    step(n, "Workflows: a run that fails is an error you cannot miss")?;
    let done = client
        .workflow("wf-refund")
        .run(json!({"id": 8, "note": "damaged in transit"}))
        .await?;
    show("wf-refund", done);
    match client
        .workflow("wf-reopen")
        .run(json!({"id": 8, "note": "customer changed their mind", "status": null}))
        .await
    {
        Err(svc_api::Error::Workflow(failed)) => show(
            "wf-reopen failed",
            failed.message().unwrap_or("no reason given"),
        ),
        Err(e) => return Err(e.into()),
        Ok(result) => show("wf-reopen", format!("{result} (unexpected)")),
    }
    Ok(())
}

async fn tour_users(client: &Client, n: &mut u32) -> Result<(), Failure> {
    step(n, "Teams: client.teams().all(..) (built-in tools resource)")?;
    let teams = client.teams().all(&ListQuery::new()).await?;
    for team in &teams {
        show(&team.name, &team.uid);
    }
    let Some(editors) = teams.iter().find(|t| t.name == "Editors").or(teams.first()) else {
        return Ok(());
    };

    step(
        n,
        "Users: add two users to a team, then list the users of that team",
    )?;
    for (email, first) in [("ana@example.com", "Ana"), ("bo@example.com", "Bo")] {
        let user = client
            .users()
            .create(&NewUser::new(email, &editors.uid).first_name(first))
            .await?;
        show("created", format!("{} in {}", user.email, editors.name));
    }
    let members = client
        .users()
        .all(&ListQuery::new().eq("group", &editors.uid).order_by("email"))
        .await?;
    show(
        &format!("users of {}", editors.name),
        members
            .iter()
            .map(|u| u.email.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    );
    Ok(())
}

/// The crates' version as a `Cargo.toml` requirement, `0.4` for `0.4.0`: what docs/testing.md's
/// `[dev-dependencies]` block says.
fn testing_version() -> String {
    let parts: Vec<&str> = env!("CARGO_PKG_VERSION").splitn(3, '.').take(2).collect();
    parts.join(".")
}

fn next_steps(emulator: &Emulator, keep_running: bool) {
    say!("\nTest your own code against the emulator (docs/testing.md); in your Cargo.toml:");
    say!("   [dev-dependencies]");
    let version = testing_version();
    say!("   svc-api = \"{version}\"");
    say!("   svc-emulator = \"{version}\"");
    say!("   tokio = {{ version = \"1\", features = [\"macros\", \"rt-multi-thread\"] }}");
    say!("   serde = {{ version = \"1\", features = [\"derive\"] }}");
    say!("   and in a #[tokio::test]:");
    say!("   let emulator = svc_emulator::Emulator::start(Default::default()).await?;");
    say!("   let client = svc_api::Client::builder_for(&emulator).build()?;");
    say!("\nNext steps");
    if !keep_running {
        say!(
            "   svc demo --keep-running    # this tour, then keep the emulator up and print the commands to try"
        );
        say!(
            "   svc emulator               # the emulator on its own; prints its URLs and keys as one JSON line"
        );
        say!("   (with a checkout, `cargo run -p svc-cli --` in place of `svc`; see docs/cli.md)");
        return;
    }
    let info = emulator.startup_info();
    say!(
        "   In another shell (`cargo run -p svc-cli --` in place of `svc` if it is not installed):"
    );
    say!("   export SVC_PROJECT={}", info.project);
    say!("   export SVC_API_BASE_URL={}", info.api_base_url);
    say!("   export SVC_APP_BASE_URL={}", info.app_base_url);
    say!("   export SVC_API_KEY={}", info.api_key);
    if let Some(tools) = info
        .resource_tokens
        .get(svc_api::model::users::TOOLS_RESOURCE)
    {
        say!("   export SVC_TOOLS_TOKEN={tools}");
    }
    if let Some(ca) = &info.tls_ca_pem {
        say!("   export SVC_CA_CERT={}", ca.display());
    }
    say!("   svc projects get -o table");
    say!("   svc pages list");
    if info.resource_tokens.contains_key("shop") {
        say!("   svc records list shop orders -f status=paid -o table");
        say!("   svc records aggregate shop orders --func sum --column total -f status=paid");
        say!("   svc sql shop \"select count(*) from orders\"");
        say!(
            "   svc sql shop \"select * from orders where total >= :min limit 5\" -p min=900 -o csv"
        );
        say!("   svc actions run shop refund --data '{{\"id\": 12}}'");
        say!(
            "   svc workflows run wf-refund --data '{{\"id\": 13, \"note\": \"damaged in transit\"}}'"
        );
    }
    say!("   svc teams list -o table");
    say!("   svc users list");
    say!(
        "   printf 'correct horse battery\\n' | svc login --email ana@example.com --password-stdin"
    );
    say!("   svc whoami -o table");
    say!(
        "\nThe emulator's web page (records, requests, snapshots; docs/ui.md), signed in by this link:"
    );
    say!("   {}", info.ui_url);
}
