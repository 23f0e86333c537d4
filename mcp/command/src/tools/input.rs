//! The input tools (docs/tools.md): click, fill, type, element, press, key, mouse,
//! hover, upload, dialog — declarations, arguments, cross-argument rules.
//!
//! Owns the rules that need no browser (mouse target shapes, dialog `text`,
//! element `select` value, single-key `browser_key`, upload files existing and
//! inside the directories uploads may read: [`upload_paths`]).
//! Handlers are thin: locate (dialog, ref and selector checks), one engine
//! call, the result shape. Key-name parsing (docs/mcp.md#keys), waiting and fences
//! belong to the engine.

use std::time::Duration;

use serde_json::json;

use super::schema::{arg_enum, tool_args, Arg, Capability, Cli, Hints, Kind, Runs, Slot, ToolDecl};
use super::{act, echo_of, engine, locate, ToolContext, SELECTOR, SELECTOR_OPT, TIMEOUT};
use crate::error::{ToolError, ToolErrorCode, ToolOutput};
use crate::session::ToolSession;

arg_enum! {
    /// browser_element `action`.
    pub enum ElementAction {
        Dblclick = "dblclick",
        Focus = "focus",
        Scroll = "scroll",
        Clear = "clear",
        Check = "check",
        Uncheck = "uncheck",
        Select = "select",
    }
}

arg_enum! {
    /// browser_key `action`.
    pub enum KeyAction {
        Press = "press",
        Down = "down",
        Up = "up",
    }
}

arg_enum! {
    /// browser_mouse `action`.
    pub enum MouseAction {
        Move = "move",
        Click = "click",
        Down = "down",
        Up = "up",
        Wheel = "wheel",
    }
}

arg_enum! {
    /// browser_mouse `button`.
    pub enum Button {
        Left = "left",
        Middle = "middle",
        Right = "right",
    }
}

arg_enum! {
    /// browser_dialog `action`.
    pub enum DialogAction {
        Inspect = "inspect",
        Accept = "accept",
        Dismiss = "dismiss",
    }
}

pub(super) const CLICK: ToolDecl = ToolDecl {
    name: "browser_click",
    title: "Click",
    verb: "click",
    description: "Click an element once visible, enabled and unobscured.",
    hints: Hints::A,
    observes: true,
    cli: Cli::new("click", &[Slot::arg("selector")]),
    args: ClickArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

pub(super) const FILL: ToolDecl = ToolDecl {
    name: "browser_fill",
    title: "Fill field",
    verb: "fill",
    description:
        "Replace an editable field's content, typed as key events (over 1024 chars: pasted).",
    hints: Hints::A,
    observes: true,
    cli: Cli::new("fill", &[Slot::arg("selector"), Slot::arg("value")]),
    args: FillArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

pub(super) const TYPE: ToolDecl = ToolDecl {
    name: "browser_type",
    title: "Type into focus",
    verb: "type",
    description: "Type text into the focused element without clearing it; \\n presses Enter.",
    hints: Hints::A,
    observes: true,
    cli: Cli::new("type", &[Slot::arg("text")]),
    args: TypeArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

pub(super) const ELEMENT: ToolDecl = ToolDecl {
    name: "browser_element",
    title: "Element action",
    verb: "element",
    description: "Double-click, focus, scroll to, clear, check, uncheck or select on an element.",
    hints: Hints::A,
    observes: true,
    cli: Cli::new(
        "element",
        &[
            Slot::arg("action"),
            Slot::arg("selector"),
            Slot::arg("value"),
        ],
    ),
    args: ElementArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

pub(super) const PRESS: ToolDecl = ToolDecl {
    name: "browser_press",
    title: "Press key",
    verb: "press",
    description: "Press a key or chord, optionally after focusing an element.",
    hints: Hints::A,
    observes: true,
    cli: Cli::new("press", &[Slot::arg("key")]),
    args: PressArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

pub(super) const KEY: ToolDecl = ToolDecl {
    name: "browser_key",
    title: "Keyboard",
    verb: "key",
    description: "Press, hold or release one key; held modifiers apply to later input.",
    hints: Hints::A,
    observes: true,
    cli: Cli::new("key", &[Slot::arg("action"), Slot::arg("key")]),
    args: KeyArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

const COORDINATE_MAX: f64 = 100_000.0;

pub(super) const MOUSE: ToolDecl = ToolDecl {
    name: "browser_mouse",
    title: "Mouse",
    verb: "mouse",
    description: "Move, click, press, release or wheel the mouse at an element or a point.",
    hints: Hints::A,
    observes: true,
    cli: Cli::new(
        "mouse",
        &[Slot::arg("action"), Slot::arg("x"), Slot::arg("y")],
    ),
    args: MouseArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

pub(super) const HOVER: ToolDecl = ToolDecl {
    name: "browser_hover",
    title: "Hover",
    verb: "hover",
    description: "Move the pointer over an element once visible and unobscured.",
    hints: Hints::A,
    observes: true,
    cli: Cli::new("hover", &[Slot::arg("selector")]),
    args: HoverArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

pub(super) const UPLOAD: ToolDecl = ToolDecl {
    name: "browser_upload",
    title: "Upload files",
    verb: "upload",
    description: "Set the files of a file input (or its label) from local paths.",
    hints: Hints::A,
    observes: true,
    cli: Cli::new("upload", &[Slot::arg("selector"), Slot::arg("files")]),
    args: UploadArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

pub(super) const DIALOG: ToolDecl = ToolDecl {
    name: "browser_dialog",
    title: "Dialog",
    verb: "dialog",
    description: "Inspect, accept or dismiss the open JavaScript dialog.",
    hints: Hints::A,
    observes: true,
    cli: Cli::new("dialog", &[Slot::arg("action"), Slot::arg("text")]),
    args: DialogArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

tool_args! {
    /// The arguments of browser_click, in schema order.
    pub struct ClickArgs {
        selector: String = SELECTOR,
        #[serde(default)]
        double: bool = Arg::boolean("double", "Double-click"),
        timeout_ms: u64 = TIMEOUT,
        tab: Option<String> = super::TAB,
    }
}

tool_args! {
    /// The arguments of browser_fill, in schema order.
    pub struct FillArgs {
        selector: String = SELECTOR,
        value: String = Arg::string("value", "New content (\"\" clears)").required(),
        #[serde(default)]
        submit: bool = Arg::boolean("submit", "Press Enter afterwards"),
        timeout_ms: u64 = TIMEOUT,
        tab: Option<String> = super::TAB,
    }
}

tool_args! {
    /// The arguments of browser_type, in schema order.
    pub struct TypeArgs {
        text: String = Arg::string("text", "Text to type").required(),
        tab: Option<String> = super::TAB,
    }
}

tool_args! {
    /// The arguments of browser_element, in schema order.
    pub struct ElementArgs {
        action: ElementAction = Arg::one_of("action", "What to do", ElementAction::VALUES).required(),
        selector: String = SELECTOR,
        value: Option<String> = Arg::string("value", "Option value or label (select)"),
        timeout_ms: u64 = TIMEOUT,
        tab: Option<String> = super::TAB,
    }
}

tool_args! {
    /// The arguments of browser_press, in schema order.
    pub struct PressArgs {
        key: String = Arg::string("key", "Key or chord: a, Enter, Control+A")
            .min_len(1)
            .max_len(64)
            .required(),
        selector: Option<String> = SELECTOR_OPT,
        timeout_ms: u64 = TIMEOUT,
        tab: Option<String> = super::TAB,
    }
}

tool_args! {
    /// The arguments of browser_key, in schema order.
    pub struct KeyArgs {
        action: KeyAction = Arg::one_of("action", "press, hold down, or release", KeyAction::VALUES).required(),
        key: String = Arg::string("key", "One key: Shift, a, Enter")
            .min_len(1)
            .max_len(64)
            .required(),
        selector: Option<String> = SELECTOR_OPT,
        timeout_ms: u64 = TIMEOUT,
        tab: Option<String> = super::TAB,
    }
}

tool_args! {
    /// The arguments of browser_mouse, in schema order.
    pub struct MouseArgs {
        action: MouseAction = Arg::one_of("action", "Mouse action", MouseAction::VALUES).required(),
        selector: Option<String> = SELECTOR_OPT,
        x: Option<f64> = Arg::num("x", "Viewport x, CSS px (with y)", 0.0, COORDINATE_MAX),
        y: Option<f64> = Arg::num("y", "Viewport y, CSS px (with x)", 0.0, COORDINATE_MAX),
        button: Button = Arg::one_of("button", "Mouse button", Button::VALUES).default_str("left"),
        delta_x: f64 = Arg::num("delta_x", "Wheel delta x", -COORDINATE_MAX, COORDINATE_MAX).default_num(0.0),
        delta_y: f64 = Arg::num("delta_y", "Wheel delta y", -COORDINATE_MAX, COORDINATE_MAX).default_num(0.0),
        timeout_ms: u64 = TIMEOUT,
        tab: Option<String> = super::TAB,
    }
}

tool_args! {
    /// The arguments of browser_hover, in schema order.
    pub struct HoverArgs {
        selector: String = SELECTOR,
        timeout_ms: u64 = TIMEOUT,
        tab: Option<String> = super::TAB,
    }
}

tool_args! {
    /// The arguments of browser_upload, in schema order.
    pub struct UploadArgs {
        selector: String = SELECTOR,
        files: Vec<String> = Arg::kind(
            "files",
            "Local paths (relative to server cwd)",
            Kind::StrList {
                min_items: 1,
                max_items: 10,
                item_min_len: 1,
                item_max_len: 4096,
            },
        )
        .required(),
        timeout_ms: u64 = TIMEOUT,
        tab: Option<String> = super::TAB,
    }
}

tool_args! {
    /// The arguments of browser_dialog, in schema order.
    pub struct DialogArgs {
        action: DialogAction = Arg::one_of("action", "What to do", DialogAction::VALUES).required(),
        text: Option<String> = Arg::string("text", "Prompt answer (accept only)"),
        tab: Option<String> = super::TAB,
    }
}

pub(super) fn check_element(args: &ElementArgs, _session: &ToolSession) -> Result<(), ToolError> {
    if args.action == ElementAction::Select && args.value.is_none() {
        return Err(ToolError::invalid_argument(
            "element: action \"select\" needs \"value\"",
            "value",
            "pass value= the option's value or visible label",
        ));
    }
    Ok(())
}

pub(super) fn check_key(args: &KeyArgs, _session: &ToolSession) -> Result<(), ToolError> {
    if is_chord(&args.key) {
        return Err(ToolError::invalid_argument(
            format!("key: {:?} is a chord; browser_key takes one key", args.key),
            "key",
            "use browser_press for chords, or hold modifiers with browser_key action=down",
        ));
    }
    Ok(())
}

/// `Control+A`, `Shift++`: more than one part joined by `+` (a lone `+` is a key).
pub(super) fn is_chord(key: &str) -> bool {
    key.chars().count() > 1 && key.contains('+')
}

pub(super) fn check_mouse(args: &MouseArgs, _session: &ToolSession) -> Result<(), ToolError> {
    let hint = "pass selector, or both x and y, or neither to act at the current pointer";
    match (args.x, args.y) {
        (Some(_), None) | (None, Some(_)) => {
            return Err(ToolError::invalid_argument(
                "mouse: x and y go together",
                if args.x.is_some() { "y" } else { "x" },
                hint,
            ))
        }
        (Some(_), Some(_)) if args.selector.is_some() => {
            return Err(ToolError::invalid_argument(
                "mouse: pass either selector or x/y, not both",
                "selector",
                hint,
            ))
        }
        _ => {}
    }
    if args.action == MouseAction::Move && args.selector.is_none() && args.x.is_none() {
        return Err(ToolError::invalid_argument(
            "mouse: move needs a target (selector or x/y)",
            "selector",
            hint,
        ));
    }
    Ok(())
}

/// Each file must be inside the directories uploads may read and be an existing regular file;
/// the message names the index only, never the path (docs/tools.md#browser_upload--upload-files).
pub(super) fn check_upload(args: &UploadArgs, session: &ToolSession) -> Result<(), ToolError> {
    upload_paths(
        &args.files,
        session.config.unrestricted_file_access,
        &session.working_dir(),
        &session.upload_roots(),
    )
    .map(drop)
}

/// The files of browser_upload, resolved: relative paths against `working_dir` (the server's
/// working directory, or the directory a CLI command ran in), symlinks and `..` resolved. Unless `unrestricted`
/// (`--allow-unrestricted-file-access`), each must resolve to a path under the server's working
/// directory (itself resolved), so a page cannot have the agent upload `/etc/shadow` or
/// `~/.ssh/id_ed25519`. The rule is checked before existence, on the resolved path (for a
/// missing file, its nearest existing ancestor resolved): a path outside gets the same error
/// whether it exists or not, so the answer tells nothing about files outside. The client's MCP
/// roots (`roots`, directories the MCP server asked the client for) are allowed as well.
pub(super) fn upload_paths(
    files: &[String],
    unrestricted: bool,
    working_dir: &std::path::Path,
    roots: &[std::path::PathBuf],
) -> Result<Vec<std::path::PathBuf>, ToolError> {
    let cwd = std::fs::canonicalize(working_dir);
    let roots: Vec<std::path::PathBuf> = roots
        .iter()
        .filter_map(|root| std::fs::canonicalize(root).ok())
        .collect();
    let mut res = Vec::with_capacity(files.len());
    for (idx, file) in files.iter().enumerate() {
        let argument = format!("files[{idx}]");
        let path = std::path::Path::new(file);
        let absolute = match &cwd {
            Ok(cwd) => cwd.join(path),
            Err(_) => path.to_path_buf(),
        };
        let resolved = resolve_path(&absolute);
        if !unrestricted {
            let inside = resolved.as_ref().is_some_and(|resolved| {
                cwd.as_ref().is_ok_and(|cwd| resolved.starts_with(cwd))
                    || roots.iter().any(|root| resolved.starts_with(root))
            });
            if !inside {
                return Err(ToolError::invalid_argument(
                    format!(
                        "upload: {argument} is outside the server's working directory and the \
                         client's roots, the only places uploads may read from \
                         (--allow-unrestricted-file-access lifts this)"
                    ),
                    &argument,
                    "upload a file under the server's working directory or a root the client \
                     declares (copy it there), or ask the user to restart chromate mcp with \
                     --allow-unrestricted-file-access",
                )
                .with_detail_key("reason", json!("outside-allowed-directories")));
            }
        }
        let file = resolved
            .filter(|resolved| std::fs::metadata(resolved).is_ok_and(|meta| meta.is_file()));
        let Some(file) = file else {
            return Err(ToolError::invalid_argument(
                format!("upload: {argument} does not exist or is not a regular file"),
                &argument,
                "pass paths of existing regular files, relative to the server's working directory or absolute",
            ));
        };
        res.push(file);
    }
    Ok(res)
}

/// `path` with symlinks and `..` resolved; for a path that does not resolve (missing, or
/// unreadable), its nearest ancestor that does, resolved, with the rest appended as written.
/// `None` when that rest holds a `..`: such a path names no file, and where it points cannot be
/// told without following what is not there.
pub fn resolve_path(path: &std::path::Path) -> Option<std::path::PathBuf> {
    if let Ok(resolved) = std::fs::canonicalize(path) {
        return Some(resolved);
    }
    let ancestor = path
        .ancestors()
        .skip(1)
        .find_map(|ancestor| Some((ancestor, std::fs::canonicalize(ancestor).ok()?)));
    let (ancestor, resolved) = ancestor?;
    let rest = path.strip_prefix(ancestor).ok()?;
    let climbs = rest
        .components()
        .any(|part| matches!(part, std::path::Component::ParentDir));
    (!climbs).then(|| resolved.join(rest))
}

pub(super) fn check_dialog(args: &DialogArgs, _session: &ToolSession) -> Result<(), ToolError> {
    if args.text.is_some() && args.action != DialogAction::Accept {
        return Err(ToolError::invalid_argument(
            format!(
                "dialog: text is only for action \"accept\", not {:?}",
                args.action.as_str()
            ),
            "text",
            "drop text, or use action=accept to answer a prompt",
        )
        .with_detail_key("allowed", json!(["accept"])));
    }
    Ok(())
}

pub(super) async fn click(
    ctx: &mut ToolContext<'_>,
    args: ClickArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = if args.double { "dblclick" } else { CLICK.verb };
    let (page, locator) = locate(ctx, verb, &args.selector, args.timeout_ms).await?;
    let clicked = if args.double {
        act(ctx, verb, &page, locator.dblclick()).await
    } else {
        act(ctx, verb, &page, locator.click()).await
    };
    // A navigation the click started that never loads (docs/mcp.md#observations).
    clicked.map_err(|error| match error.code {
        ToolErrorCode::TimeoutWaitingLoad => error.with_detail_key("clicked", json!(true)),
        _ => error,
    })?;
    Ok(ToolOutput::new(
        json!({ "ok": true, "selector": echo_of(locator.selector()) }),
    ))
}

pub(super) async fn fill(
    ctx: &mut ToolContext<'_>,
    args: FillArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = FILL.verb;
    let (page, locator) = locate(ctx, verb, &args.selector, args.timeout_ms).await?;
    if let Some(error) = ctx.session.container_not_editable(verb, locator.selector()) {
        return Err(error);
    }
    let mut result = json!({ "ok": true, "selector": echo_of(locator.selector()) });
    if args.submit {
        act(ctx, verb, &page, locator.fill_and_submit(&args.value)).await?;
        result["submitted"] = json!(true);
    } else {
        act(ctx, verb, &page, locator.fill(&args.value)).await?;
    }
    Ok(ToolOutput::new(result))
}

pub(super) async fn type_text(
    ctx: &mut ToolContext<'_>,
    args: TypeArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = TYPE.verb;
    let page = ctx.session.active_page(verb).await?;
    // browser_type takes no timeout_ms: its keystrokes are bounded by the agent default.
    let typed = page.within(ctx.session.agent_timeout(), page.type_text(&args.text));
    let length = act(ctx, verb, &page, typed).await?;
    Ok(ToolOutput::new(json!({ "ok": true, "length": length })))
}

pub(super) async fn element(
    ctx: &mut ToolContext<'_>,
    args: ElementArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = args.action.as_str();
    let (page, locator) = locate(ctx, verb, &args.selector, args.timeout_ms).await?;
    let mut result = json!({ "ok": true, "selector": echo_of(locator.selector()), "action": verb });
    match args.action {
        ElementAction::Dblclick => act(ctx, verb, &page, locator.dblclick()).await?,
        ElementAction::Focus => act(ctx, verb, &page, locator.focus()).await?,
        ElementAction::Scroll => act(ctx, verb, &page, locator.scroll_into_view()).await?,
        ElementAction::Clear => {
            if let Some(error) = ctx.session.container_not_editable(verb, locator.selector()) {
                return Err(error);
            }
            act(ctx, verb, &page, locator.clear()).await?;
        }
        ElementAction::Check => {
            act(ctx, verb, &page, locator.check()).await?;
            result["checked"] = json!(true);
        }
        ElementAction::Uncheck => {
            act(ctx, verb, &page, locator.uncheck()).await?;
            result["checked"] = json!(false);
        }
        ElementAction::Select => {
            let value = args.value.as_deref().unwrap_or("");
            let selected = engine(ctx, verb, &page, locator.select_option(value)).await?;
            result["value"] = json!(selected.value);
        }
    }
    Ok(ToolOutput::new(result))
}

pub(super) async fn press(
    ctx: &mut ToolContext<'_>,
    args: PressArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = PRESS.verb;
    match &args.selector {
        Some(selector) => {
            let (page, locator) = locate(ctx, verb, selector, args.timeout_ms).await?;
            act(ctx, verb, &page, locator.press(&args.key)).await?;
        }
        None => {
            let page = ctx.session.active_page(verb).await?;
            let timeout = Duration::from_millis(args.timeout_ms);
            act(
                ctx,
                verb,
                &page,
                page.within(timeout, page.press(&args.key)),
            )
            .await?;
        }
    }
    Ok(ToolOutput::new(json!({ "ok": true, "key": args.key })))
}

pub(super) async fn key(ctx: &mut ToolContext<'_>, args: KeyArgs) -> Result<ToolOutput, ToolError> {
    let verb = KEY.verb;
    match &args.selector {
        Some(selector) => {
            let (page, locator) = locate(ctx, verb, selector, args.timeout_ms).await?;
            match args.action {
                KeyAction::Down => act(ctx, verb, &page, locator.key_down(&args.key)).await?,
                KeyAction::Up => act(ctx, verb, &page, locator.key_up(&args.key)).await?,
                KeyAction::Press => {
                    act(ctx, verb, &page, locator.press(&args.key)).await?;
                }
            }
        }
        None => {
            let page = ctx.session.active_page(verb).await?;
            let timeout = Duration::from_millis(args.timeout_ms);
            match args.action {
                KeyAction::Down => {
                    act(
                        ctx,
                        verb,
                        &page,
                        page.within(timeout, page.key_down(&args.key)),
                    )
                    .await?;
                }
                KeyAction::Up => {
                    act(
                        ctx,
                        verb,
                        &page,
                        page.within(timeout, page.key_up(&args.key)),
                    )
                    .await?;
                }
                KeyAction::Press => {
                    act(
                        ctx,
                        verb,
                        &page,
                        page.within(timeout, page.press(&args.key)),
                    )
                    .await?;
                }
            }
        }
    }
    Ok(ToolOutput::new(
        json!({ "ok": true, "action": args.action, "key": args.key }),
    ))
}

fn mouse_button(button: Button) -> chromate::actions::MouseButton {
    match button {
        Button::Left => chromate::actions::MouseButton::Left,
        Button::Middle => chromate::actions::MouseButton::Middle,
        Button::Right => chromate::actions::MouseButton::Right,
    }
}

pub(super) async fn mouse(
    ctx: &mut ToolContext<'_>,
    args: MouseArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = "mouse";
    let button = mouse_button(args.button);
    let (x, y) = match &args.selector {
        Some(selector) => {
            let (page, locator) = locate(ctx, verb, selector, args.timeout_ms).await?;
            match args.action {
                MouseAction::Move => act(ctx, verb, &page, locator.mouse_move()).await?,
                MouseAction::Click => act(ctx, verb, &page, locator.mouse_click(button)).await?,
                MouseAction::Down => act(ctx, verb, &page, locator.mouse_down(button)).await?,
                MouseAction::Up => act(ctx, verb, &page, locator.mouse_up(button)).await?,
                MouseAction::Wheel => {
                    let wheel = locator.mouse_wheel(args.delta_x, args.delta_y);
                    act(ctx, verb, &page, wheel).await?
                }
            }
        }
        None => {
            let page = ctx.session.active_page(verb).await?;
            let (x, y) = match (args.x, args.y) {
                (Some(x), Some(y)) => (x, y),
                _ => page.mouse_position(),
            };
            let timeout = Duration::from_millis(args.timeout_ms);
            match args.action {
                MouseAction::Move => {
                    act(
                        ctx,
                        verb,
                        &page,
                        page.within(timeout, page.mouse_move(x, y)),
                    )
                    .await?;
                }
                MouseAction::Click => {
                    let click = page.mouse_click(x, y, button);
                    act(ctx, verb, &page, page.within(timeout, click)).await?;
                }
                MouseAction::Down => {
                    let down = page.mouse_down(x, y, button);
                    act(ctx, verb, &page, page.within(timeout, down)).await?;
                }
                MouseAction::Up => {
                    let up = page.mouse_up(x, y, button);
                    act(ctx, verb, &page, page.within(timeout, up)).await?;
                }
                MouseAction::Wheel => {
                    let wheel = page.mouse_wheel(x, y, args.delta_x, args.delta_y);
                    act(ctx, verb, &page, page.within(timeout, wheel)).await?;
                }
            }
            page.mouse_position()
        }
    };
    let mut result = json!({ "ok": true, "action": args.action, "x": x, "y": y });
    if matches!(
        args.action,
        MouseAction::Click | MouseAction::Down | MouseAction::Up
    ) {
        result["button"] = json!(args.button);
    }
    Ok(ToolOutput::new(result))
}

pub(super) async fn hover(
    ctx: &mut ToolContext<'_>,
    args: HoverArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = HOVER.verb;
    let (page, locator) = locate(ctx, verb, &args.selector, args.timeout_ms).await?;
    act(ctx, verb, &page, locator.hover()).await?;
    Ok(ToolOutput::new(
        json!({ "ok": true, "selector": echo_of(locator.selector()) }),
    ))
}

pub(super) async fn upload(
    ctx: &mut ToolContext<'_>,
    args: UploadArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = UPLOAD.verb;
    // Checked again (the call's checks ran before), so the browser gets exactly the files
    // that passed the rule, resolved.
    let files = upload_paths(
        &args.files,
        ctx.session.config.unrestricted_file_access,
        &ctx.session.working_dir(),
        &ctx.session.upload_roots(),
    )?;
    let (page, locator) = locate(ctx, verb, &args.selector, args.timeout_ms).await?;
    let count = act(ctx, verb, &page, locator.set_input_files(&files)).await?;
    Ok(ToolOutput::new(
        json!({ "ok": true, "selector": echo_of(locator.selector()), "count": count }),
    ))
}

pub(super) async fn dialog(
    ctx: &mut ToolContext<'_>,
    args: DialogArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = format!("dialog {}", args.action.as_str());
    let page = ctx.session.active_page_any(&verb).await?;
    let open = page.dialog();
    if args.action == DialogAction::Inspect {
        let mut result = match &open {
            None => json!({ "open": false, "message": "" }),
            Some(dialog) => json!({ "open": true, "type": dialog.kind, "message": dialog.message }),
        };
        if let Some(default) = open
            .as_ref()
            .filter(|d| d.kind == "prompt")
            .and_then(|d| d.default_prompt.as_ref())
        {
            result["defaultValue"] = json!(default);
        }
        return Ok(ToolOutput::new(result));
    }
    let Some(dialog) = open else {
        return Err(ToolError::new(
            ToolErrorCode::StateInvalid,
            format!("{verb}: no dialog is open"),
        )
        .with_hint("nothing to answer; take a browser_snapshot to see the page")
        .with_detail(json!({ "reason": "no-dialog" })));
    };
    let answered = if args.action == DialogAction::Accept {
        // The prompt text goes to prompts only (docs/tools.md#browser_dialog--dialog: ignored otherwise).
        let text = args.text.as_deref().filter(|_| dialog.kind == "prompt");
        page.accept_dialog(text).await
    } else {
        page.dismiss_dialog().await
    };
    match answered {
        Ok(answered) => Ok(ToolOutput::new(
            json!({ "ok": true, "action": args.action, "type": answered.kind }),
        )),
        Err(err) => Err(ctx.session.engine_error(&verb, &err)),
    }
}
