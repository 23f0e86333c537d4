//! Generates the CDP bindings into `$OUT_DIR/cdp.rs`; the only code that reads `protocol-json/`,
//! and decides whether axe-core is built in.
//!
//! The protocol is read from `protocol.json` in the package: in the repository a symlink to the
//! top-level `protocol-json/protocol.json` (cargo packages the file it points to, so the
//! published crate carries its own copy). A checkout without symlinks (Git for Windows by
//! default) writes the link's target as the file's text; that is followed too.
//!
//! axe-core (`axe/node_modules/axe-core/axe.min.js`, the pinned npm package `.ci/setup.sh`
//! installs, and which the published crate carries) is embedded when it is present: the build
//! sets `cfg(chromate_axe)` and `CHROMATE_AXE_VERSION`, and `src/js/mod.rs` includes the file.
//! A build without it still works; `browser_a11y` then says how to get axe-core.
//!
//! The commands and events the engine itself sends and reads ([`ENGINE_METHODS`]) always
//! compile, with every type they reference. Each `domain-*` cargo feature adds its domain whole;
//! `all-domains` compiles every one.

use std::path::{Path, PathBuf};

/// Every command the engine and the MCP server send and every event they read, by method name.
///
/// A method missing here is a compile error where the engine names its type, so the list stays
/// true. Keep it sorted by domain.
const ENGINE_METHODS: &[&str] = &[
    "Accessibility.getFullAXTree",
    "Accessibility.getPartialAXTree",
    "Browser.cancelDownload",
    "Browser.close",
    "Browser.downloadProgress",
    "Browser.downloadWillBegin",
    "Browser.getVersion",
    "Browser.setDownloadBehavior",
    "DOM.describeNode",
    "DOM.focus",
    "DOM.getDocument",
    "DOM.querySelectorAll",
    "DOM.removeNode",
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
    "Inspector.enable",
    "Inspector.targetCrashed",
    "Log.enable",
    "Network.dataReceived",
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
    "Page.stopLoading",
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
    "Target.createBrowserContext",
    "Target.createTarget",
    "Target.detachedFromTarget",
    "Target.disposeBrowserContext",
    "Target.setAutoAttach",
    "Target.setDiscoverTargets",
    "Target.targetCrashed",
    "Target.targetCreated",
    "Target.targetDestroyed",
    "Target.targetInfoChanged",
    "WebMCP.cancelInvocation",
    "WebMCP.enable",
    "WebMCP.invokeTool",
    "WebMCP.toolResponded",
    "WebMCP.toolsAdded",
    "WebMCP.toolsRemoved",
];

fn main() {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    println!("cargo::rerun-if-changed=build.rs");
    let json = read_protocol(&manifest_dir);
    embed_axe(&manifest_dir);
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

/// The protocol JSON from `protocol.json` in the package, following a symlink checked out as
/// a file holding its target's path.
fn read_protocol(manifest_dir: &Path) -> String {
    let mut path = manifest_dir.join("protocol.json");
    for _ in 0..2 {
        println!("cargo::rerun-if-changed={}", path.display());
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) => panic!("reading {}: {err}", path.display()),
        };
        if text.trim_start().starts_with('{') {
            return text;
        }
        // A symlink checked out as a file: its text is the relative target.
        path = manifest_dir.join(text.trim());
    }
    panic!(
        "{} is neither the protocol JSON nor a link to it",
        path.display()
    );
}

/// Sets `cfg(chromate_axe)` when the pinned axe-core is installed, and `CHROMATE_AXE_VERSION`
/// (the pin in `axe/package.json`) either way.
fn embed_axe(manifest_dir: &Path) {
    println!("cargo::rustc-check-cfg=cfg(chromate_axe)");
    // The directory, not the file: a missing file would rerun this script on every build.
    println!("cargo::rerun-if-changed=axe");
    let pin = std::fs::read_to_string(manifest_dir.join("axe/package.json")).unwrap_or_default();
    let version = pin
        .split("\"axe-core\":")
        .nth(1)
        .and_then(|rest| rest.split('"').nth(1))
        .unwrap_or_else(|| panic!("axe/package.json pins no axe-core version"));
    println!("cargo::rustc-env=CHROMATE_AXE_VERSION={version}");
    if manifest_dir
        .join("axe/node_modules/axe-core/axe.min.js")
        .is_file()
    {
        println!("cargo::rustc-cfg=chromate_axe");
    }
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("cargo sets {name} for build scripts"))
}
