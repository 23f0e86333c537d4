//! One reader of the command line's words for every command's parser: `--flag value`,
//! `--flag=value`, `-h`, positionals, and `--`, after which every word is positional.
//!
//! Each parser still decides what its flags mean; this only says which word is which, so
//! `--name=value` and `--name value` behave alike everywhere.

/// One word of the command line.
enum Word<'a> {
    /// A word that is not a flag (or any word after `--`).
    Positional(&'a str),
    Flag(Flag<'a>),
}

/// A flag as written: `--depth`, `--depth=2` or `-h`.
pub(crate) struct Flag<'a> {
    /// The flag without its `=value`, e.g. `--depth`.
    pub(crate) name: &'a str,
    /// The word as written, `=value` and all.
    pub(crate) written: &'a str,
    inline: Option<&'a str>,
}

impl Flag<'_> {
    /// Whether the flag came without `=value`, as a switch such as `--json` must.
    pub(crate) fn is_bare(&self) -> bool {
        self.inline.is_none()
    }
}

/// Which words start a flag.
#[derive(Clone, Copy)]
pub(crate) enum Dashes {
    /// `--name` and `-h` only: `-5` or `-x` is a positional (a number, a text to type).
    Long,
    /// Every word starting with `-`, except `-` alone (standard input).
    Any,
}

/// The words after a command's name, read one at a time.
pub(crate) struct Words<'a> {
    rest: std::slice::Iter<'a, String>,
    dashes: Dashes,
    only_positional: bool,
}

impl<'a> Words<'a> {
    pub(crate) fn new(words: &'a [String], dashes: Dashes) -> Self {
        Words {
            rest: words.iter(),
            dashes,
            only_positional: false,
        }
    }

    /// The next word, or `None` at the end.
    fn next_word(&mut self) -> Option<Word<'a>> {
        let word = self.rest.next()?;
        if self.only_positional {
            return Some(Word::Positional(word));
        }
        if word == "--" {
            self.only_positional = true;
            return self.next_word();
        }
        let is_flag = match self.dashes {
            Dashes::Long => word.starts_with("--") || word == "-h",
            Dashes::Any => word.starts_with('-') && word != "-",
        };
        if !is_flag {
            return Some(Word::Positional(word));
        }
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (word.as_str(), None),
        };
        Some(Word::Flag(Flag {
            name,
            written: word,
            inline,
        }))
    }

    /// The next flag, with every positional word before it pushed onto `positional`;
    /// `None` at the end.
    pub(crate) fn next_flag(&mut self, positional: &mut Vec<String>) -> Option<Flag<'a>> {
        loop {
            match self.next_word()? {
                Word::Positional(word) => positional.push(word.to_owned()),
                Word::Flag(flag) => return Some(flag),
            }
        }
    }

    /// The flag's value: what follows its `=`, else the next word. The error is
    /// `"--depth needs a number"` for `what` "a number"; the caller adds its usage.
    pub(crate) fn value(&mut self, flag: &Flag<'_>, what: &str) -> Result<String, String> {
        match flag.inline {
            Some(value) => Ok(value.to_owned()),
            None => self
                .rest
                .next()
                .cloned()
                .ok_or_else(|| format!("{} needs {what}", flag.name)),
        }
    }

    /// The flag's value, which must not be empty: `--step ""` and `--step=` are
    /// `"--step needs a value"`, as a missing one is.
    pub(crate) fn text_value(&mut self, flag: &Flag<'_>) -> Result<String, String> {
        self.value(flag, "a value")
            .ok()
            .filter(|value| !value.is_empty())
            .ok_or_else(|| format!("{} needs a value", flag.name))
    }

    /// An optional value: what follows the flag's `=`, else the next word unless it is
    /// a flag itself (`--http` then `--isolated`) or there is none.
    pub(crate) fn optional_value(&mut self, flag: &Flag<'_>) -> Option<String> {
        if let Some(value) = flag.inline {
            return Some(value.to_owned());
        }
        match self.rest.clone().next() {
            Some(next) if !next.starts_with('-') => self.rest.next().cloned(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str, dashes: Dashes) -> Vec<String> {
        let words: Vec<String> = line.split(' ').map(str::to_owned).collect();
        let mut words_read = Words::new(&words, dashes);
        let mut seen = Vec::new();
        while let Some(word) = words_read.next_word() {
            seen.push(match word {
                Word::Positional(text) => format!("pos:{text}"),
                Word::Flag(flag) if flag.name == "--take" => {
                    format!(
                        "take:{}",
                        words_read.value(&flag, "a value").unwrap_or_default()
                    )
                }
                Word::Flag(flag) => format!("flag:{}:{}", flag.name, flag.is_bare()),
            });
        }
        seen
    }

    #[test]
    fn inline_and_separate_values_read_alike_and_double_dash_ends_the_flags() {
        assert_eq!(
            read("--take=1 --take 2 x", Dashes::Long),
            ["take:1", "take:2", "pos:x"]
        );
        assert_eq!(
            read("--json=no -h -5 - --", Dashes::Long),
            ["flag:--json:false", "flag:-h:true", "pos:-5", "pos:-"]
        );
        assert_eq!(
            read("-x -- --take", Dashes::Any),
            ["flag:-x:true", "pos:--take"]
        );
        // `=` splits only a long flag's name from its value.
        assert_eq!(read("-a=b", Dashes::Any), ["flag:-a=b:true"]);
    }

    #[test]
    fn a_missing_value_names_the_flag_and_an_optional_one_skips_a_flag() {
        let words: Vec<String> = vec!["--depth".into()];
        let mut read = Words::new(&words, Dashes::Long);
        let Some(Word::Flag(flag)) = read.next_word() else {
            panic!("--depth is a flag");
        };
        assert_eq!(
            read.value(&flag, "a number"),
            Err("--depth needs a number".into())
        );

        let words: Vec<String> = vec![
            "--http".into(),
            "--isolated".into(),
            "--http".into(),
            "a".into(),
        ];
        let mut read = Words::new(&words, Dashes::Long);
        let mut optional = Vec::new();
        while let Some(word) = read.next_word() {
            if let Word::Flag(flag) = word {
                if flag.name == "--http" {
                    optional.push(read.optional_value(&flag));
                }
            }
        }
        assert_eq!(optional, [None, Some("a".to_owned())]);
    }
}
