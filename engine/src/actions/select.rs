//! `select_option`: the first option whose `value` attribute equals
//! the text, else whose trimmed label does; fires `input` and `change`.

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::wait::Deadline;

use super::{states, status, Aim, Locator, Status};

/// The option that was selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectedOption {
    /// Its `value`.
    pub value: String,
    /// Its trimmed label.
    pub label: String,
}

impl Locator {
    /// Selects the option of a `<select>` whose value, else label, equals `value_or_label`.
    pub async fn select_option(&self, value_or_label: &str) -> Result<SelectedOption> {
        self.bounded(async {
            let verb = "select";
            let deadline = Deadline::new(self.timeout);
            self.wait_actionable(verb, states::ENABLED, Aim::Focus, deadline)
                .await?;
            let answer = self
                .call_with_value("actionability.selectOption", json!(value_or_label))
                .await?;
            let text = |key: &str| {
                answer
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            let status = status("actionability.selectOption", &answer)?;
            match status {
                Status::Ok => Ok(SelectedOption {
                    value: text("value"),
                    label: text("label"),
                }),
                Status::NotSelect => Err(Error::invalid_argument_of(
                    "selector",
                    format!("{verb}: {} is not a <select>", self.selector.canonical()),
                )),
                Status::NoOption => Err(Error::NoSuchOption {
                    verb: verb.into(),
                    selector: self.selector.canonical().to_owned(),
                    value: value_or_label.to_owned(),
                    options: answer
                        .get("options")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|option| option.get("label").and_then(Value::as_str))
                        .take(20)
                        .map(str::to_owned)
                        .collect(),
                    count: answer
                        .get("count")
                        .and_then(Value::as_u64)
                        .and_then(|count| usize::try_from(count).ok())
                        .unwrap_or(0),
                }),
                Status::DisabledOption => Err(Error::invalid_argument_of(
                    "value",
                    format!(
                        "{verb}: option {value_or_label:?} of {} is disabled",
                        self.selector.canonical()
                    ),
                )),
                _ => {
                    self.target_status(verb, status, &answer)?;
                    Err(self.no_match(verb))
                }
            }
        })
        .await
    }
}
