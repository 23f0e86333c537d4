//! Hostile pages (issue 19): per case, the time until the call returns and the time until the
//! next navigation (to a plain fixture page, in the same tab) succeeds.
//!
//! Cases: a page that hangs at load (navigate with a 1 s timeout), a click handler that never
//! returns (click with a 1 s timeout), and an axe-core audit of 200,000 elements made in the page
//! by a small script (bounded by 5 s, the agent default). Every call must return within its
//! timeout + about 1 s (the check that the page answers, stopping its script), and the tab must
//! navigate again at once.
//!
//! Run: `cargo run --release -p chromate-benches --bin hostile_pages`

use std::time::{Duration, Instant};

use chromate::{Browser, LaunchOptions, WaitUntil};

const SHORT: Duration = Duration::from_millis(1000);
const AUDIT: Duration = Duration::from_millis(5000);
const NAV: Duration = Duration::from_secs(30);

fn ms(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() -> chromate::Result<()> {
    let server = chromate_benches::fixture_server()?;
    let browser = Browser::launch(LaunchOptions::default()).await?;
    let page = browser.new_page("about:blank").await?;
    println!("| case | timeout ms | call returns ms | outcome | next navigate ms |");
    println!("|---|---:|---:|---|---:|");

    for case in [
        "hang at load",
        "hang in a click handler",
        "lone surrogates in page text",
        "console flood (100,000 messages)",
        "axe on 200,000 elements",
    ] {
        page.goto(&server.url("nav.html"), WaitUntil::Load, NAV)
            .await?;
        let (timeout, started, res) = match case {
            "hang at load" => {
                let started = Instant::now();
                let res = page
                    .goto(&server.url("hang-load.html"), WaitUntil::Load, SHORT)
                    .await
                    .map(|_| ());
                (SHORT, started, res)
            }
            "hang in a click handler" => {
                page.goto(&server.url("hang-click.html"), WaitUntil::Load, NAV)
                    .await?;
                let started = Instant::now();
                let res = page.locator("#spin")?.timeout(SHORT).click().await;
                (SHORT, started, res)
            }
            "lone surrogates in page text" => {
                let url = "data:text/html,<title>t</title><button>go</button><script>\
                           document.title = 'a\\ud800b'; \
                           document.querySelector('button').textContent = 'x\\udc00y'</script>";
                let started = Instant::now();
                let res = async {
                    page.goto(url, WaitUntil::Load, NAV).await?;
                    page.snapshot(chromate::snapshot::SnapshotOptions::default())
                        .await?;
                    Ok(())
                }
                .await;
                (NAV, started, res)
            }
            "console flood (100,000 messages)" => {
                let started = Instant::now();
                let res = page
                    .evaluate("for (let i = 0; i < 100000; i++) console.log('flood ' + i); 1")
                    .await
                    .map(|_| ());
                (NAV, started, res)
            }
            _ => {
                page.evaluate(
                    "document.body.insertAdjacentHTML('beforeend', \
                     '<div><span>x</span></div>'.repeat(100000)); 1",
                )
                .await?;
                let started = Instant::now();
                let audit = page.audit_accessibility(chromate::audit::AuditOptions::default());
                let res = match page.within(AUDIT, audit).await {
                    Err(err)
                        if err.recovery().is_none()
                            && err.code() == chromate::ErrorCode::Timeout =>
                    {
                        // The audit yields now and then: it runs past its bound; stop it.
                        let recovery = page.stop_script(AUDIT).await;
                        Err(chromate::Error::Stalled {
                            error: Box::new(err),
                            recovery,
                        })
                    }
                    other => other.map(|_| ()),
                };
                (AUDIT, started, res)
            }
        };
        let returned = started.elapsed();
        let outcome = match &res {
            Ok(()) => "succeeded".to_owned(),
            Err(err) => match err.recovery() {
                Some(recovery) => format!("{}, {recovery}", err.code()),
                None => err.code().to_string(),
            },
        };
        let started = Instant::now();
        let next = page
            .goto(&server.url("nav2.html"), WaitUntil::Load, NAV)
            .await;
        let next_ms = match next {
            Ok(_) => ms(started.elapsed()),
            Err(err) => format!("failed: {err}"),
        };
        println!(
            "| {case} | {} | {} | {outcome} | {next_ms} |",
            timeout.as_millis(),
            ms(returned)
        );
    }
    browser.close().await;
    Ok(())
}
