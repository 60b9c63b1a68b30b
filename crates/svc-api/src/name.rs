//! [`Name`]: a resource, model or project name kept in place when it is short.
//!
//! A handle is usually made for one call (`client.records("shop", "orders").retrieve(7)`), so
//! copying its two names to the heap cost two allocations and two frees per call: a tenth of the
//! SDK's own work on a small answer. Names are short; those of up to [`INLINE`] bytes are kept in
//! place (an `arrayvec::ArrayString`, whose text is read without checking its UTF-8 again: a
//! record operation reads its names three times), longer ones on the heap. A
//! [`Call`](crate::request::Call) keeps its resource name for its span the same way.

use std::fmt;

use arrayvec::ArrayString;

/// The longest name kept in place.
const INLINE: usize = 30;

/// A name, in place when short.
#[derive(Clone)]
pub(crate) enum Name {
    Inline(ArrayString<INLINE>),
    Heap(Box<str>),
}

impl Name {
    pub(crate) fn new(text: &str) -> Self {
        match ArrayString::from(text) {
            Ok(inline) => Self::Inline(inline),
            Err(_) => Self::Heap(text.into()),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::Inline(text) => text,
            Self::Heap(text) => text,
        }
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_text_whatever_its_length() {
        let long = "x".repeat(INLINE + 1);
        for text in ["", "shop", "ордера", "a b/c", &"é".repeat(15), &long] {
            let name = Name::new(text);
            assert_eq!(name.as_str(), text);
            assert_eq!(name.clone().as_str(), text);
            assert_eq!(format!("{name:?}"), format!("{text:?}"));
        }
        assert!(matches!(Name::new(&"y".repeat(INLINE)), Name::Inline(_)));
        assert!(matches!(Name::new(&long), Name::Heap(_)));
    }
}
