//! The input tools (§4.3): click, fill, type, element, press, key, mouse,
//! hover, upload, dialog — declarations, arguments, cross-argument rules.
//!
//! Owns the rules that need no browser (mouse target shapes, dialog `text`,
//! element `select` value, single-key `browser_key`, upload files existing).
//! Does not act on a page yet: handlers answer UNSUPPORTED until the engine
//! is wired; key-name parsing (§9.6) belongs to the engine.

use serde::Deserialize;
use serde_json::json;

use super::schema::{Arg, Hints, Kind, ToolDecl};
use super::{ToolContext, SELECTOR, SELECTOR_OPT, TIMEOUT};
use crate::error::{ToolError, ToolOutput};
use crate::session::Session;

pub(crate) const CLICK: ToolDecl = ToolDecl {
    name: "browser_click",
    title: "Click",
    verb: "click",
    description: "Click an element once visible, enabled and unobscured.",
    hints: Hints::A,
    observes: true,
    args: &[SELECTOR, Arg::boolean("double", "Double-click"), TIMEOUT],
};

pub(crate) const FILL: ToolDecl = ToolDecl {
    name: "browser_fill",
    title: "Fill field",
    verb: "fill",
    description: "Replace an editable field's content, typed as key events.",
    hints: Hints::A,
    observes: true,
    args: &[
        SELECTOR,
        Arg::string("value", "New content (\"\" clears)").required(),
        Arg::boolean("submit", "Press Enter afterwards"),
        TIMEOUT,
    ],
};

pub(crate) const TYPE: ToolDecl = ToolDecl {
    name: "browser_type",
    title: "Type into focus",
    verb: "type",
    description: "Type text into the focused element without clearing it; \\n presses Enter.",
    hints: Hints::A,
    observes: true,
    args: &[Arg::string("text", "Text to type").required()],
};

pub(crate) const ELEMENT: ToolDecl = ToolDecl {
    name: "browser_element",
    title: "Element action",
    verb: "element",
    description: "Double-click, focus, scroll to, clear, check, uncheck or select on an element.",
    hints: Hints::A,
    observes: true,
    args: &[
        Arg::one_of(
            "action",
            "What to do",
            &[
                "dblclick", "focus", "scroll", "clear", "check", "uncheck", "select",
            ],
        )
        .required(),
        SELECTOR,
        Arg::string("value", "Option value or label (select)"),
        TIMEOUT,
    ],
};

pub(crate) const PRESS: ToolDecl = ToolDecl {
    name: "browser_press",
    title: "Press key",
    verb: "press",
    description: "Press a key or chord, optionally after focusing an element.",
    hints: Hints::A,
    observes: true,
    args: &[
        Arg::string("key", "Key or chord: a, Enter, Control+A")
            .min_len(1)
            .max_len(64)
            .required(),
        SELECTOR_OPT,
        TIMEOUT,
    ],
};

pub(crate) const KEY: ToolDecl = ToolDecl {
    name: "browser_key",
    title: "Keyboard",
    verb: "key",
    description: "Press, hold or release one key; held modifiers apply to later input.",
    hints: Hints::A,
    observes: true,
    args: &[
        Arg::one_of(
            "action",
            "press, hold down, or release",
            &["press", "down", "up"],
        )
        .required(),
        Arg::string("key", "One key: Shift, a, Enter")
            .min_len(1)
            .max_len(64)
            .required(),
        SELECTOR_OPT,
        TIMEOUT,
    ],
};

const COORDINATE_MAX: f64 = 100_000.0;

pub(crate) const MOUSE: ToolDecl = ToolDecl {
    name: "browser_mouse",
    title: "Mouse",
    verb: "mouse",
    description: "Move, click, press, release or wheel the mouse at an element or a point.",
    hints: Hints::A,
    observes: true,
    args: &[
        Arg::one_of(
            "action",
            "Mouse action",
            &["move", "click", "down", "up", "wheel"],
        )
        .required(),
        SELECTOR_OPT,
        Arg::num("x", "Viewport x, CSS px (with y)", 0.0, COORDINATE_MAX),
        Arg::num("y", "Viewport y, CSS px (with x)", 0.0, COORDINATE_MAX),
        Arg::one_of("button", "Mouse button", &["left", "middle", "right"]).default_str("left"),
        Arg::num("delta_x", "Wheel delta x", -COORDINATE_MAX, COORDINATE_MAX).default_num(0.0),
        Arg::num("delta_y", "Wheel delta y", -COORDINATE_MAX, COORDINATE_MAX).default_num(0.0),
        TIMEOUT,
    ],
};

pub(crate) const HOVER: ToolDecl = ToolDecl {
    name: "browser_hover",
    title: "Hover",
    verb: "hover",
    description: "Move the pointer over an element once visible and unobscured.",
    hints: Hints::A,
    observes: true,
    args: &[SELECTOR, TIMEOUT],
};

pub(crate) const UPLOAD: ToolDecl = ToolDecl {
    name: "browser_upload",
    title: "Upload files",
    verb: "upload",
    description: "Set the files of a file input (or its label) from local paths.",
    hints: Hints::A,
    observes: true,
    args: &[
        SELECTOR,
        Arg::kind(
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
        TIMEOUT,
    ],
};

pub(crate) const DIALOG: ToolDecl = ToolDecl {
    name: "browser_dialog",
    title: "Dialog",
    verb: "dialog",
    description: "Inspect, accept or dismiss the open JavaScript dialog.",
    hints: Hints::A,
    observes: true,
    args: &[
        Arg::one_of("action", "What to do", &["inspect", "accept", "dismiss"]).required(),
        Arg::string("text", "Prompt answer (accept only)"),
    ],
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct ClickArgs {
    pub(crate) selector: String,
    #[serde(default)]
    pub(crate) double: bool,
    pub(crate) timeout_ms: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct FillArgs {
    pub(crate) selector: String,
    pub(crate) value: String,
    #[serde(default)]
    pub(crate) submit: bool,
    pub(crate) timeout_ms: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct TypeArgs {
    pub(crate) text: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct ElementArgs {
    pub(crate) action: String,
    pub(crate) selector: String,
    pub(crate) value: Option<String>,
    pub(crate) timeout_ms: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct PressArgs {
    pub(crate) key: String,
    pub(crate) selector: Option<String>,
    pub(crate) timeout_ms: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct KeyArgs {
    pub(crate) action: String,
    pub(crate) key: String,
    pub(crate) selector: Option<String>,
    pub(crate) timeout_ms: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct MouseArgs {
    pub(crate) action: String,
    pub(crate) selector: Option<String>,
    pub(crate) x: Option<f64>,
    pub(crate) y: Option<f64>,
    pub(crate) button: String,
    pub(crate) delta_x: f64,
    pub(crate) delta_y: f64,
    pub(crate) timeout_ms: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct HoverArgs {
    pub(crate) selector: String,
    pub(crate) timeout_ms: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct UploadArgs {
    pub(crate) selector: String,
    pub(crate) files: Vec<String>,
    pub(crate) timeout_ms: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct DialogArgs {
    pub(crate) action: String,
    pub(crate) text: Option<String>,
}

pub(crate) fn check_click(_args: &ClickArgs, _session: &Session) -> Result<(), ToolError> {
    Ok(())
}

pub(crate) fn check_fill(_args: &FillArgs, _session: &Session) -> Result<(), ToolError> {
    Ok(())
}

pub(crate) fn check_type(_args: &TypeArgs, _session: &Session) -> Result<(), ToolError> {
    Ok(())
}

pub(crate) fn check_element(args: &ElementArgs, _session: &Session) -> Result<(), ToolError> {
    if args.action == "select" && args.value.is_none() {
        return Err(ToolError::invalid_argument(
            "element: action \"select\" needs \"value\"",
            "value",
            "pass value= the option's value or visible label",
        ));
    }
    Ok(())
}

pub(crate) fn check_press(_args: &PressArgs, _session: &Session) -> Result<(), ToolError> {
    Ok(())
}

pub(crate) fn check_key(args: &KeyArgs, _session: &Session) -> Result<(), ToolError> {
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
pub(crate) fn is_chord(key: &str) -> bool {
    key.chars().count() > 1 && key.contains('+')
}

pub(crate) fn check_mouse(args: &MouseArgs, _session: &Session) -> Result<(), ToolError> {
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
    if args.action == "move" && args.selector.is_none() && args.x.is_none() {
        return Err(ToolError::invalid_argument(
            "mouse: move needs a target (selector or x/y)",
            "selector",
            hint,
        ));
    }
    Ok(())
}

pub(crate) fn check_hover(_args: &HoverArgs, _session: &Session) -> Result<(), ToolError> {
    Ok(())
}

/// Each file must exist and be a regular file (symlinks followed); the
/// message names the index only, never the path (§4.3).
pub(crate) fn check_upload(args: &UploadArgs, _session: &Session) -> Result<(), ToolError> {
    for (idx, file) in args.files.iter().enumerate() {
        let is_file = std::fs::metadata(file).is_ok_and(|meta| meta.is_file());
        if !is_file {
            return Err(ToolError::invalid_argument(
                format!("upload: files[{idx}] does not exist or is not a regular file"),
                &format!("files[{idx}]"),
                "pass paths of existing regular files, relative to the server's working directory or absolute",
            ));
        }
    }
    Ok(())
}

pub(crate) fn check_dialog(args: &DialogArgs, _session: &Session) -> Result<(), ToolError> {
    if args.text.is_some() && args.action != "accept" {
        return Err(ToolError::invalid_argument(
            format!(
                "dialog: text is only for action \"accept\", not {:?}",
                args.action
            ),
            "text",
            "drop text, or use action=accept to answer a prompt",
        )
        .with_detail_key("allowed", json!(["accept"])));
    }
    Ok(())
}

unwired! {
    click(ClickArgs) => CLICK;
    fill(FillArgs) => FILL;
    type_text(TypeArgs) => TYPE;
    element(ElementArgs) => ELEMENT;
    press(PressArgs) => PRESS;
    key(KeyArgs) => KEY;
    mouse(MouseArgs) => MOUSE;
    hover(HoverArgs) => HOVER;
    upload(UploadArgs) => UPLOAD;
    dialog(DialogArgs) => DIALOG;
}
