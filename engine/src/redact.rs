//! Secret fields (docs/mcp.md#secrets) for callers that record what was typed: [`Page::is_secret_field`] tells
//! whether a field's value is one snapshots suppress, with the same rule (`js/redact.js` asks
//! `js/snapshot.js`). It does not redact anything itself.

use serde_json::{json, Value};

use crate::error::Result;
use crate::selector::{self, Selector};
use crate::Page;

impl Page {
    /// Whether the first match of `selector` (or, for `None`, the focused element) is a field
    /// whose value snapshots suppress. A selector that matches nothing counts as secret, so a
    /// caller that redacts on `true` leaks nothing when in doubt.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// let password = chromate::Selector::parse("#password")?;
    /// if page.is_secret_field(Some(&password)).await? {
    ///     println!("value=[redacted]");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn is_secret_field<'a>(
        &'a self,
        selector: Option<&'a Selector>,
    ) -> crate::rt::Boxed<'a, Result<bool>> {
        Box::pin(self.is_secret_field_unboxed(selector))
    }

    async fn is_secret_field_unboxed(&self, selector: Option<&Selector>) -> Result<bool> {
        let (frame_id, target) = match selector {
            Some(parsed) => selector::js_target(self, parsed)?,
            None => (None, json!({})),
        };
        let answer = self
            .call_isolated(frame_id.as_deref(), "redact.secretTarget", &target)
            .await?;
        Ok(answer != Value::Bool(false))
    }
}
