//! Several `chromate mcp --http` servers behind a real load balancer: nginx from Debian
//! (`.ci/setup.sh all`) with the config docs/mcp.md gives users
//! ([`chromate_tests::nginx::sticky_config`]), sticky by the node prefix each server puts on
//! its session ids (`--node`), both servers on one Browserless pool; the agents are the Python
//! MCP SDK ([`chromate_tests::nginx::Agents`], `tests/clients/agents.py`). Every process a test
//! starts (pool, nginx and its workers, servers, agents, the pool's browsers) is checked gone
//! by PID.

use std::time::{Duration, Instant};

use chromate_tests::nginx::{agents_fixture, Agents, HttpNode, Nginx};
use chromate_tests::pool::{established_sockets, Browserless, PoolLimits};
use chromate_tests::procs;
use serde_json::Value;

use crate::util::chromate_binary;

const TOKEN: &str = "balancer-test-token";
/// Twenty browsers starting at once on two shared cores take their time.
const READY_WITHIN: Duration = Duration::from_secs(300);

fn pool(concurrent: u32) -> Browserless {
    Browserless::start(PoolLimits {
        concurrent,
        queued: 0,
        timeout_ms: 600_000,
    })
    .unwrap_or_else(|err| panic!("cannot start Browserless: {err}"))
}

fn node(name: &str, pool: &Browserless) -> HttpNode {
    let endpoint = pool.ws_url();
    // Every call's default timeout is raised from 5 s: twenty browsers on two shared cores
    // answer slowly, and this test is about routing and isolation, not speed.
    HttpNode::start_with_env(
        &chromate_binary(),
        name,
        &[
            "--auth-token",
            TOKEN,
            "--cdp-endpoint",
            &endpoint,
            "--cdp-timeout",
            "240000",
        ],
        &[("CHROMATE_AGENT_TIMEOUT", "60000")],
    )
    .unwrap_or_else(|err| panic!("cannot start chromate --node {name}: {err}"))
}

fn balancer(nodes: &[&HttpNode]) -> Nginx {
    let upstreams: Vec<(&str, String)> = nodes
        .iter()
        .map(|node| (node.name(), node.address()))
        .collect();
    Nginx::start(&upstreams).unwrap_or_else(|err| panic!("cannot start nginx: {err}"))
}

/// The agents of a report made by `node` (their session ids start with its name).
fn on<'a>(report: &'a [Value], node: &str) -> Vec<&'a Value> {
    let prefix = format!("{node}.");
    report
        .iter()
        .filter(|agent| {
            agent["session_id"]
                .as_str()
                .is_some_and(|id| id.starts_with(&prefix))
        })
        .collect()
}

/// Each agent made its session, saw its own cookie and storage and nobody else's, and its
/// session id is a node name, a dot and 32 hex digits.
fn assert_each_saw_only_its_own(report: &[Value], nginx: &Nginx) {
    for agent in report {
        let name = agent["name"].as_str().unwrap_or_default();
        assert!(agent["error"].is_null(), "{agent}\n{}", nginx.log());
        let id = agent["session_id"].as_str().unwrap_or_default();
        let random = id.split_once('.').map(|(_, random)| random).unwrap_or("");
        assert!(
            random.len() == 32 && random.bytes().all(|b| b.is_ascii_hexdigit()),
            "session id {id:?}"
        );
        let seen = &agent["seen"];
        // The title the login page set from the agent's name (the navigate result's own JSON;
        // its observation may time out on a loaded machine).
        assert!(
            seen["login"]
                .as_str()
                .is_some_and(|text| text.contains(&format!("\"title\":\"{name}\""))),
            "{agent}"
        );
        // The page printed the Cookie header this agent's browser sent: its own only.
        assert!(
            seen["snapshot"]
                .as_str()
                .is_some_and(|text| text.contains(&format!("cookie [user={name}]"))),
            "{agent}"
        );
        // And the page reads its own cookie and storage.
        assert!(
            seen["storage"]
                .as_str()
                .is_some_and(|text| text.contains(&format!("\"result\":\"user={name} | {name}\""))),
            "{agent}"
        );
        assert_eq!(
            seen["errors"],
            serde_json::json!([false, false, false, false]),
            "{agent}"
        );
    }
}

/// `tools/list` POSTed straight to the server on `port` with session id `id`, bypassing nginx;
/// the whole answer (`Connection: close`, read to its end, 30 s at most).
fn post_direct(port: u16, id: &str) -> String {
    use std::io::{Read, Write};
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {id}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

/// Polls (60 s at most) until `check` holds.
fn eventually(what: &str, mut check: impl FnMut() -> Result<(), String>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match check() {
            Ok(()) => return,
            Err(why) if Instant::now() >= deadline => panic!("{what}: {why}"),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Ends everything and proves by PID that nothing is left.
fn end_all(mut nginx: Nginx, nodes: Vec<HttpNode>, pool: Browserless) {
    let nginx_pids = nginx.pids();
    let left = nginx.stop();
    assert!(
        left.is_empty(),
        "nginx processes outlived SIGQUIT: {left:?}"
    );
    assert!(nginx_pids.iter().all(|&pid| !procs::is_alive(pid)));
    for mut node in nodes {
        let pid = node.pid();
        if procs::is_alive(pid) {
            let status = node.stop();
            assert!(
                status.is_some_and(|status| status.success()),
                "chromate --node {} did not exit cleanly: {status:?}\n{}",
                node.name(),
                node.stderr_text()
            );
        }
        assert!(!procs::is_alive(pid), "chromate {pid} is left");
    }
    // The servers let go of their pool sessions: the pool ends their browsers.
    eventually("the pool's browsers end with the sessions", || {
        let left = pool.chromium_pids();
        if left.is_empty() {
            Ok(())
        } else {
            Err(format!("{left:?}\n{}", pool.log()))
        }
    });
    let node_pid = pool.pid();
    drop(pool);
    assert!(!procs::is_alive(node_pid), "Browserless {node_pid} is left");
}

#[test]
fn twenty_agents_through_nginx_spread_over_two_servers_on_one_pool_each_see_only_their_own() {
    let fixture = agents_fixture().expect("fixture server");
    let pool = pool(20);
    let a = node("node-a", &pool);
    let b = node("node-b", &pool);
    let nginx = balancer(&[&a, &b]);
    let mut agents =
        Agents::start(&nginx.endpoint(), TOKEN, &fixture.origin(), 20).expect("start the agents");
    let ready = agents
        .wait_for("READY", READY_WITHIN)
        .unwrap_or_else(|why| panic!("{why}\nnginx: {}", nginx.log()));
    let report = ready.as_array().cloned().unwrap_or_default();
    assert_eq!(report.len(), 20, "{ready}");
    assert_each_saw_only_its_own(&report, &nginx);
    // Spread over both servers: every session is one of theirs.
    let (on_a, on_b) = (on(&report, "node-a").len(), on(&report, "node-b").len());
    assert_eq!(on_a + on_b, 20, "{ready}");
    assert!(
        on_a > 0 && on_b > 0,
        "all on one server: a {on_a}, b {on_b}"
    );
    // On each server's side: one pool connection per session it holds.
    assert_eq!(established_sockets(a.pid(), pool.port()).len(), on_a);
    assert_eq!(established_sockets(b.pid(), pool.port()).len(), on_b);
    // On the pool's side: a browser per session, from both servers.
    assert_eq!(pool.browser_pids().len(), 20, "{}", pool.log());
    // A request routed to the wrong server says so: node-a's session id sent to node-b.
    let misrouted = on(&report, "node-a")[0]["session_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let answer = post_direct(b.port(), &misrouted);
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    assert!(
        answer.contains(r#"made by the server named \"node-a\", and this is \"node-b\""#),
        "{answer}"
    );
    // Each later request went where its session was made: a wrong route would be a 404.
    agents.go().expect("go");
    let done = agents
        .wait_for("DONE", Duration::from_secs(120))
        .expect("the agents finish");
    for agent in done.as_array().into_iter().flatten() {
        let name = agent["name"].as_str().unwrap_or_default();
        assert_eq!(agent["after"]["ok"], true, "{agent}");
        assert!(
            agent["after"]["text"]
                .as_str()
                .is_some_and(|text| text.contains(&format!("\"result\":\"user={name} | {name}\""))),
            "{agent}"
        );
    }
    assert!(agents
        .wait(Duration::from_secs(30))
        .is_some_and(|s| s.success()));
    let agents_pid = agents.pid();
    drop(agents);
    assert!(!procs::is_alive(agents_pid));
    // The access log names both servers as upstreams, and no request met a dead one.
    let log = nginx.access_log();
    assert!(log.contains(&format!("upstream={}", a.address())), "{log}");
    assert!(log.contains(&format!("upstream={}", b.address())), "{log}");
    assert!(!log.contains(" 502 ") && !log.contains(" 404 "), "{log}");
    end_all(nginx, vec![a, b], pool);
}

#[test]
fn a_killed_server_loses_its_sessions_with_a_clear_error_and_the_others_go_on() {
    let fixture = agents_fixture().expect("fixture server");
    let pool = pool(10);
    let mut a = node("node-a", &pool);
    let b = node("node-b", &pool);
    let nginx = balancer(&[&a, &b]);
    let mut agents =
        Agents::start(&nginx.endpoint(), TOKEN, &fixture.origin(), 6).expect("start the agents");
    let ready = agents
        .wait_for("READY", READY_WITHIN)
        .unwrap_or_else(|why| panic!("{why}\nnginx: {}", nginx.log()));
    let report = ready.as_array().cloned().unwrap_or_default();
    assert_each_saw_only_its_own(&report, &nginx);
    let lost: Vec<String> = on(&report, "node-a")
        .iter()
        .filter_map(|agent| agent["name"].as_str().map(str::to_owned))
        .collect();
    let kept = on(&report, "node-b").len();
    assert!(!lost.is_empty() && kept > 0, "{ready}");
    // Node a dies mid-run (SIGKILL by PID: no goodbye to anyone).
    let a_pid = a.pid();
    a.kill();
    assert!(!procs::is_alive(a_pid), "chromate {a_pid} survived SIGKILL");
    // The pool saw the dead server's connections close and ended those browsers; the live
    // server's stay.
    eventually("the dead server's pool browsers end", || {
        let browsers = pool.browser_pids().len();
        if browsers == kept {
            Ok(())
        } else {
            Err(format!("{browsers} browsers, {kept} expected"))
        }
    });
    agents.go().expect("go");
    let done = agents
        .wait_for("DONE", Duration::from_secs(120))
        .expect("the agents finish");
    for agent in done.as_array().into_iter().flatten() {
        let name = agent["name"].as_str().unwrap_or_default();
        let after = &agent["after"];
        if lost.iter().any(|lost| lost == name) {
            // nginx's 502 for the dead upstream, turned by the config into the MCP answer for
            // a session that is gone: 404 with a JSON-RPC error the SDK raises as it is.
            assert_eq!(after["ok"], false, "{agent}");
            assert_eq!(after["code"], -32600, "{agent}");
            assert!(
                after["message"].as_str().is_some_and(|message| message
                    .starts_with("session lost: the chromate server that held it is unreachable")),
                "{agent}"
            );
        } else {
            assert_eq!(after["ok"], true, "{agent}");
            assert!(
                after["text"].as_str().is_some_and(
                    |text| text.contains(&format!("\"result\":\"user={name} | {name}\""))
                ),
                "{agent}"
            );
        }
    }
    assert!(agents
        .wait(Duration::from_secs(30))
        .is_some_and(|s| s.success()));
    drop(agents);
    // New agents still get in: initialize goes to the server that is up.
    let mut more =
        Agents::start(&nginx.endpoint(), TOKEN, &fixture.origin(), 2).expect("start more agents");
    let again = more.wait_for("READY", READY_WITHIN).expect("new sessions");
    let again = again.as_array().cloned().unwrap_or_default();
    assert_each_saw_only_its_own(&again, &nginx);
    assert_eq!(on(&again, "node-b").len(), 2, "{again:?}");
    more.go().expect("go");
    more.wait_for("DONE", Duration::from_secs(120))
        .expect("done");
    assert!(more
        .wait(Duration::from_secs(30))
        .is_some_and(|s| s.success()));
    drop(more);
    end_all(nginx, vec![a, b], pool);
}

/// docs/mcp.md gives users the config these tests run (`sticky_config`), for two servers
/// named `chromate-a` and `chromate-b`; `UPDATE_EXPECT=1` writes it there.
#[test]
fn the_documented_nginx_config_is_the_one_the_tests_run() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/mcp.md");
    let doc = std::fs::read_to_string(&path).expect("docs/mcp.md");
    let expected = chromate_tests::nginx::sticky_config(
        "8080",
        &[
            ("node-a", "chromate-a:8931".to_owned()),
            ("node-b", "chromate-b:8931".to_owned()),
        ],
        std::path::Path::new("/var/lib/chromate-nginx"),
    );
    let section = doc
        .find("### Several servers behind a load balancer")
        .expect("the section");
    let start = doc[section..].find("```nginx\n").expect("an nginx block") + section + 9;
    let end = doc[start..].find("```").expect("its end") + start;
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        let updated = format!("{}{expected}{}", &doc[..start], &doc[end..]);
        std::fs::write(&path, updated).expect("write docs/mcp.md");
        return;
    }
    assert_eq!(
        doc[start..end],
        expected,
        "docs/mcp.md's nginx config is not the tested one: UPDATE_EXPECT=1 writes it"
    );
}
