//! A process that launches a browser with chromate, prints `pid <browser pid>` and waits
//! forever; the end-to-end tests SIGKILL it to prove the browser does not outlive its owner.

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
    std::future::pending::<()>().await;
}
