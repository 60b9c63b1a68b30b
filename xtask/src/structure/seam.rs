//! The seam a new database server writes: the emulator's own traits that a backend folder
//! implements, and how many methods each makes it write (its required methods: no default
//! body). Read from the sources with the tokens of [`super::tokens`], test code left out.
//!
//! What counts is what a new database would have to write by hand: an `impl Trait for X` (or
//! `impl<...> Trait<...> for X<...>`) in the folder, of a trait the emulator defines outside the
//! backends. A trait the folder defines for itself is its own business, not the seam; one that
//! comes through a macro (`backend::awaited_backend!`) or a blanket impl costs it nothing.

use super::{BACKENDS, Token, rust_code, test_lines, tokens};

/// A trait of the emulator, as its definition reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TraitDef {
    pub(super) name: String,
    /// The file that defines it, relative to the emulator's `src/`.
    pub(super) path: String,
    /// Its `fn` items without a default body (the signature ends with `;`): what every
    /// implementation writes.
    pub(super) required: usize,
    /// Its `const` and `type` items without a default (`const NAME: &str;`): what every
    /// implementation also writes, beside the methods (told, not counted in the ceiling).
    pub(super) items: usize,
    /// The bounds after its `:` that name traits (last path segment): a database implementing
    /// it implements those too.
    pub(super) supertraits: Vec<String>,
}

/// One backend folder's seam.
#[derive(Debug, Default)]
pub(super) struct Seam {
    /// The emulator's traits the folder implements, most required methods first.
    pub(super) traits: Vec<TraitDef>,
    /// Traits the folder implements that it defines itself: its own helpers, not counted.
    pub(super) own: Vec<TraitDef>,
    /// Supertraits of the seam's traits, defined by the emulator, that the folder does not
    /// implement itself (a blanket impl or a macro does): not counted either.
    pub(super) elsewhere: Vec<String>,
}

impl Seam {
    /// The required methods of all its traits.
    pub(super) fn methods(&self) -> usize {
        self.traits.iter().map(|t| t.required).sum()
    }

    /// The constants and types without a default of all its traits.
    pub(super) fn items(&self) -> usize {
        self.traits.iter().map(|t| t.items).sum()
    }

    /// The names of its traits, sorted.
    pub(super) fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.traits.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        names
    }
}

/// The seam of `folder` (`postgres`, `mysql`), from the emulator's non-test sources
/// (`(path relative to src/, text)`). The definitions are read outside the backends, where the
/// interface every database implements lives.
pub(super) fn seam(sources: &[(String, String)], folder: &str) -> Seam {
    let top = |path: &str| path.split('/').next().unwrap_or_default().to_owned();
    let mut defs: Vec<TraitDef> = Vec::new();
    let mut own = Vec::new();
    let mut implemented = Vec::new();
    for (path, src) in sources {
        let top = top(path);
        if !BACKENDS.contains(&top.as_str()) {
            for def in trait_defs(path, src) {
                // The first definition of a name wins; the emulator has one per name.
                if !defs.iter().any(|d| d.name == def.name) {
                    defs.push(def);
                }
            }
        } else if top == folder {
            implemented.extend(implemented_traits(src));
            own.extend(trait_defs(path, src));
        }
    }
    let mut traits: Vec<TraitDef> = defs
        .iter()
        .filter(|d| implemented.contains(&d.name) && !own.iter().any(|o| o.name == d.name))
        .cloned()
        .collect();
    traits.sort_by(|a, b| b.required.cmp(&a.required).then(a.name.cmp(&b.name)));
    // The supertraits are in the seam already when the folder implements them: a new database
    // writes those impls too. The others are left out, and said.
    let mut elsewhere: Vec<String> = traits
        .iter()
        .flat_map(|t| &t.supertraits)
        .filter(|s| defs.iter().any(|d| &d.name == *s) && !implemented.contains(s))
        .cloned()
        .collect();
    elsewhere.sort();
    elsewhere.dedup();
    own.retain(|d| implemented.contains(&d.name));
    own.sort_by(|a, b| a.name.cmp(&b.name));
    Seam {
        traits,
        own,
        elsewhere,
    }
}

/// The tokens of `src`'s non-test code (a `#[cfg(test)] mod` is left out whole, so its braces
/// go with it).
fn code_tokens(src: &str) -> Vec<(Token, usize)> {
    let code = rust_code(src);
    let test = test_lines(&code);
    tokens(&code)
        .into_iter()
        .filter(|(_, line)| !test.get(line - 1).copied().unwrap_or(false))
        .collect()
}

/// After generics that open at token `i` (`<`), the index past their `>`; `i` when none open
/// there. A `->` inside (`F: Fn() -> u8`) closes nothing.
fn skip_generics(tokens: &[(Token, usize)], i: usize) -> usize {
    if !matches!(tokens.get(i), Some((Token::Punct('<'), _))) {
        return i;
    }
    let mut depth = 0usize;
    for j in i..tokens.len() {
        match &tokens[j].0 {
            Token::Punct('<') => depth += 1,
            Token::Punct('>') if !matches!(tokens.get(j - 1), Some((Token::Punct('-'), _))) => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// The traits `src` defines, with their required methods and supertraits.
pub(super) fn trait_defs(path: &str, src: &str) -> Vec<TraitDef> {
    let tokens = code_tokens(src);
    let ident = |i: usize| match tokens.get(i) {
        Some((Token::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let mut out = Vec::new();
    for i in 0..tokens.len() {
        let (Some("trait"), Some(name)) = (ident(i), ident(i + 1)) else {
            continue;
        };
        let mut j = skip_generics(&tokens, i + 2);
        let mut supertraits = Vec::new();
        if matches!(tokens.get(j), Some((Token::Punct(':'), _))) {
            // `A + B<X: C + D> + ?Sized + 'static`, up to `where` or the body: each bound at
            // depth 0 whose path starts with a name is a trait.
            let mut bound_start = true;
            j += 1;
            while let Some((token, _)) = tokens.get(j) {
                match token {
                    Token::Ident(w) if w == "where" => break,
                    Token::Punct('{' | ';') => break,
                    Token::Punct('+') => bound_start = true,
                    Token::Punct('<') => {
                        j = skip_generics(&tokens, j);
                        continue;
                    }
                    Token::Ident(segment) => {
                        // The last segment of the path (`flow::Connection` is `Connection`).
                        if bound_start || matches!(tokens.get(j - 1), Some((Token::PathSep, _))) {
                            if !bound_start {
                                supertraits.pop();
                            }
                            supertraits.push(segment.clone());
                        }
                        bound_start = false;
                    }
                    _ => bound_start = false,
                }
                j += 1;
            }
        }
        while j < tokens.len() && !matches!(tokens[j].0, Token::Punct('{' | ';')) {
            j += 1;
        }
        let (methods, items) = required(&tokens, j);
        out.push(TraitDef {
            name: name.to_owned(),
            path: path.to_owned(),
            required: methods,
            items,
            supertraits,
        });
    }
    out
}

/// What the body that opens at token `open` (`{`) leaves to every implementation:
/// `(methods, items)`. A method is a `fn` item whose signature ends with `;` (over any number of
/// lines, through generics and a where clause) rather than a body; an item a `const` or `type`
/// that ends with `;` before any `=` (`const NAME: &str;`, `type Row: Send;`). A `;` inside
/// brackets (`[u8; 4]`, `Table<Column = X>`) ends nothing; a fn pointer type (`fn(u8)`) is no
/// item.
fn required(tokens: &[(Token, usize)], open: usize) -> (usize, usize) {
    if !matches!(tokens.get(open), Some((Token::Punct('{'), _))) {
        return (0, 0);
    }
    let (mut braces, mut brackets, mut generics) = (0usize, 0usize, 0usize);
    let (mut methods, mut items) = (0, 0);
    let (mut in_signature, mut in_item) = (false, false);
    for i in open..tokens.len() {
        match &tokens[i].0 {
            Token::Ident(w) if w == "fn" && braces == 1 => {
                in_signature = matches!(tokens.get(i + 1), Some((Token::Ident(_), _)));
            }
            Token::Ident(w) if (w == "const" || w == "type") && braces == 1 => in_item = true,
            Token::Punct('=') if in_item && brackets == 0 && generics == 0 => in_item = false,
            Token::Punct('(' | '[') => brackets += 1,
            Token::Punct(')' | ']') => brackets = brackets.saturating_sub(1),
            Token::Punct('<') if in_item => generics += 1,
            Token::Punct('>') if in_item => generics = generics.saturating_sub(1),
            Token::Punct(';') if brackets == 0 && generics == 0 => {
                if in_signature {
                    methods += 1;
                } else if in_item {
                    items += 1;
                }
                (in_signature, in_item) = (false, false);
            }
            Token::Punct('{') => {
                if brackets == 0 {
                    in_signature = false;
                }
                braces += 1;
            }
            Token::Punct('}') => {
                braces -= 1;
                if braces == 0 {
                    break;
                }
            }
            _ => {}
        }
    }
    (methods, items)
}

/// The traits `src` implements by an `impl ... Trait ... for` item of its own (last path
/// segment: `impl flow::Connection for X` is `Connection`), in order, repeats kept.
pub(super) fn implemented_traits(src: &str) -> Vec<String> {
    let tokens = code_tokens(src);
    let mut out = Vec::new();
    for i in 0..tokens.len() {
        if !matches!(&tokens[i].0, Token::Ident(w) if w == "impl") {
            continue;
        }
        // `impl<T: X>`, then `!`, then the trait's path and its generics, then `for`.
        let mut j = skip_generics(&tokens, i + 1);
        if matches!(tokens.get(j), Some((Token::Punct('!'), _))) {
            j += 1;
        }
        let mut name = None;
        while let Some((Token::Ident(segment), _)) = tokens.get(j) {
            if segment == "for" || segment == "dyn" {
                break;
            }
            name = Some(segment.clone());
            j += 1;
            if !matches!(tokens.get(j), Some((Token::PathSep, _))) {
                break;
            }
            j += 1;
        }
        j = skip_generics(&tokens, j);
        let is_for = matches!(tokens.get(j), Some((Token::Ident(w), _)) if w == "for");
        if let Some(name) = name.filter(|_| is_for) {
            out.push(name);
        }
    }
    out
}
