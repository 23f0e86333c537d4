//! A process that launches a browser with chromate, prints `pid <browser pid>` and waits
//! forever; the end-to-end tests SIGKILL it to prove the browser does not outlive its owner.
//! With the argument `kill` it loads a page, kills the browser instead (`Browser::kill`, which
//! returns once the browser is reaped and its profile removed), prints `killed` and exits: the
//! tests then look for what the browser left behind.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let browser = match chromate::Browser::launch(chromate::LaunchOptions::default()).await {
        Ok(browser) => browser,
        Err(err) => {
            eprintln!("owner-probe: {err}");
            std::process::exit(1);
        }
    };
    println!("pid {}", browser.pid().unwrap_or(0));
    if std::env::args().nth(1).as_deref() == Some("kill") {
        if let Err(err) = browser.new_page("data:text/html,<p>probe</p>").await {
            eprintln!("owner-probe: {err}");
            std::process::exit(1);
        }
        browser.kill().await;
        println!("killed");
        return;
    }
    std::future::pending::<()>().await;
}
