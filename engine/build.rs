//! Generates the CDP bindings into `$OUT_DIR/cdp.rs`; the only code that reads `protocol-json/`.
//!
//! The commands and events the engine itself sends and reads ([`ENGINE_METHODS`]) always
//! compile, with every type they reference. Each `domain-*` cargo feature adds its domain whole;
//! `all-domains` compiles every one.

use std::path::PathBuf;

/// Every command the engine and the MCP server send and every event they read, by method name.
///
/// A method missing here is a compile error where the engine names its type, so the list stays
/// true. Keep it sorted by domain.
const ENGINE_METHODS: &[&str] = &[
    "Accessibility.getPartialAXTree",
    "Browser.cancelDownload",
    "Browser.close",
    "Browser.downloadProgress",
    "Browser.downloadWillBegin",
    "Browser.getVersion",
    "Browser.setDownloadBehavior",
    "DOM.describeNode",
    "DOM.focus",
    "DOM.setFileInputFiles",
    "Emulation.setDeviceMetricsOverride",
    "Emulation.setScrollbarsHidden",
    "Fetch.continueRequest",
    "Fetch.continueResponse",
    "Fetch.disable",
    "Fetch.enable",
    "Fetch.failRequest",
    "Fetch.fulfillRequest",
    "Fetch.requestPaused",
    "Input.dispatchKeyEvent",
    "Input.dispatchMouseEvent",
    "Input.insertText",
    "Inspector.targetCrashed",
    "Log.enable",
    "Network.enable",
    "Network.loadingFailed",
    "Network.loadingFinished",
    "Network.requestWillBeSent",
    "Network.responseReceived",
    "Page.addScriptToEvaluateOnNewDocument",
    "Page.captureScreenshot",
    "Page.createIsolatedWorld",
    "Page.enable",
    "Page.frameAttached",
    "Page.frameDetached",
    "Page.frameNavigated",
    "Page.frameRequestedNavigation",
    "Page.frameStartedNavigating",
    "Page.frameStoppedLoading",
    "Page.getFrameTree",
    "Page.getLayoutMetrics",
    "Page.getNavigationHistory",
    "Page.handleJavaScriptDialog",
    "Page.javascriptDialogClosed",
    "Page.javascriptDialogOpening",
    "Page.lifecycleEvent",
    "Page.navigate",
    "Page.navigateToHistoryEntry",
    "Page.navigatedWithinDocument",
    "Page.printToPDF",
    "Page.reload",
    "Page.removeScriptToEvaluateOnNewDocument",
    "Page.screencastFrame",
    "Page.screencastFrameAck",
    "Page.setLifecycleEventsEnabled",
    "Page.startScreencast",
    "Page.stopScreencast",
    "Runtime.callFunctionOn",
    "Runtime.compileScript",
    "Runtime.consoleAPICalled",
    "Runtime.enable",
    "Runtime.evaluate",
    "Runtime.exceptionThrown",
    "Runtime.executionContextCreated",
    "Runtime.executionContextDestroyed",
    "Runtime.executionContextsCleared",
    "Runtime.releaseObject",
    "Runtime.runIfWaitingForDebugger",
    "Runtime.terminateExecution",
    "Storage.clearCookies",
    "Storage.getCookies",
    "Storage.setCookies",
    "Target.attachedToTarget",
    "Target.closeTarget",
    "Target.createTarget",
    "Target.detachedFromTarget",
    "Target.setAutoAttach",
    "Target.setDiscoverTargets",
    "Target.targetCrashed",
    "Target.targetCreated",
    "Target.targetDestroyed",
    "Target.targetInfoChanged",
];

fn main() {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let protocol = manifest_dir.join("../protocol-json/protocol.json");
    println!("cargo::rerun-if-changed={}", protocol.display());
    println!("cargo::rerun-if-changed=build.rs");
    let json = match std::fs::read_to_string(&protocol) {
        Ok(json) => json,
        Err(err) => panic!("reading {}: {err}", protocol.display()),
    };
    let selection = if std::env::var_os("CARGO_FEATURE_ALL_DOMAINS").is_some() {
        cdp_gen::DomainSelection::All
    } else {
        let domains = cdp_gen::domain_names(&json).unwrap_or_else(|err| panic!("{err}"));
        let chosen = domains.into_iter().filter(|domain| {
            let var = format!("CARGO_FEATURE_DOMAIN_{}", domain.to_uppercase());
            std::env::var_os(var).is_some()
        });
        let methods = ENGINE_METHODS.iter().map(|method| method.to_string());
        cdp_gen::DomainSelection::Only(chosen.chain(methods).collect())
    };
    // Unformatted output: rustc does not need prettyplease, and skipping it saves build time.
    // `cargo codegen` writes the formatted version for people to read.
    let (src, _) = cdp_gen::generate_unformatted(&json, &selection)
        .unwrap_or_else(|err| panic!("generating CDP bindings: {err}"));
    let out = PathBuf::from(env("OUT_DIR")).join("cdp.rs");
    if let Err(err) = std::fs::write(&out, src) {
        panic!("writing {}: {err}", out.display());
    }
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("cargo sets {name} for build scripts"))
}
