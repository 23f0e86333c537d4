//! Where the engine's `tracing` warnings go: one line each on stderr, `chromate: <message>
//! key=value …`, warnings and errors only. stdout carries only JSON-RPC, so this is the one
//! place the library's diagnostics reach the user.
//!
//! A dozen lines of `tracing::Subscriber` instead of a subscriber crate: no spans are used,
//! only events.

use std::fmt::Write as _;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Installs the stderr subscriber for the whole process (once; later calls change nothing).
pub(crate) fn install() {
    // Fails only if one is already set, which is then the one in use.
    let _ = tracing::subscriber::set_global_default(Stderr);
}

struct Stderr;

/// Collects an event's fields: `message` first, the rest as ` key=value`.
#[derive(Default)]
struct Line {
    message: String,
    fields: String,
}

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }
}

impl Subscriber for Stderr {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= Level::WARN
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut line = Line::default();
        event.record(&mut line);
        eprintln!("chromate: {}{}", line.message, line.fields);
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}
