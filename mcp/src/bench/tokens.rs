//! Token counts of a snapshot's text: the `o200k_base` encoding (OpenAI's GPT-4o family) through
//! the `bpe-openai` crate, when the binary is built with the `tokens` feature
//! (`cargo build --release -p chromate-mcp --features tokens`). The default build leaves the
//! tokenizer out (its tables take the stripped release binary from 10.3 MB to 44.6 MB,
//! `benches/README.md`) and reports bytes / 4 alone.

/// The encoding counted, if this build has it.
pub(crate) const TOKENIZER: Option<&str> = if cfg!(feature = "tokens") {
    Some("o200k_base")
} else {
    None
};

/// How a build without the tokenizer gets real token counts.
pub(crate) const HOW_TO_COUNT: &str =
    "tokens are bytes / 4: build with `cargo build --release -p chromate-mcp --features tokens` for o200k_base counts";

/// `o200k_base` tokens of `text` (`None` in a build without the tokenizer).
#[cfg(feature = "tokens")]
pub(crate) fn count(text: &str) -> Option<usize> {
    Some(bpe_openai::o200k_base().count(text))
}

/// `o200k_base` tokens of `text` (`None` in a build without the tokenizer).
#[cfg(not(feature = "tokens"))]
pub(crate) fn count(_text: &str) -> Option<usize> {
    None
}

/// The estimate beside it: bytes / 4, rounded up.
pub(crate) fn estimate(bytes: usize) -> usize {
    bytes.div_ceil(4)
}

#[cfg(all(test, feature = "tokens"))]
mod tests {
    #[test]
    fn o200k_base_counts_known_strings() {
        // `tiktoken.get_encoding("o200k_base").encode("hello world")` is [24912, 2375].
        assert_eq!(super::count("hello world"), Some(2));
        assert_eq!(super::count(""), Some(0));
    }
}
