//! The condition that selects the rows after a page's last row, in the order of the page's
//! terms and with NULLs where the database orders them: a page walk's seek past its anchor
//! (`svc_engine::walks` keeps the anchors).

/// Where a database orders NULLs among the other values of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nulls {
    /// After every value ascending, before every value descending (PostgreSQL).
    Largest,
    /// Before every value ascending, after every value descending (MySQL, SQLite).
    Smallest,
}

/// The condition that selects the rows after a row whose sort key is `key`, in the order of
/// `terms` (`(column, descending)`, the last one the unique key), with NULLs where `nulls`
/// puts them. `bind(i)` binds term `i`'s value (never NULL) and returns its placeholder; it is
/// called once for each place the value appears, first term first.
pub fn seek_condition<K>(
    terms: &[(&str, bool)],
    key: &[Option<K>],
    nulls: Nulls,
    bind: &mut dyn FnMut(usize) -> String,
) -> String {
    seek_from(0, terms, key, nulls, bind)
}

fn seek_from<K>(
    at: usize,
    terms: &[(&str, bool)],
    key: &[Option<K>],
    nulls: Nulls,
    bind: &mut dyn FnMut(usize) -> String,
) -> String {
    let (Some(&(column, desc)), Some(value)) = (terms.get(at), key.get(at)) else {
        return "(1 = 0)".to_owned();
    };
    let last = at + 1 == terms.len();
    // Whether NULLs come after the values in this term's direction.
    let nulls_follow = (nulls == Nulls::Largest) != desc;
    if value.is_none() {
        // After a NULL.
        if last {
            return "(1 = 0)".to_owned();
        }
        let tail = seek_from(at + 1, terms, key, nulls, bind);
        return if nulls_follow {
            // Only the other NULLs, by the next terms.
            format!("({column} IS NULL AND ({tail}))")
        } else {
            // The other NULLs by the next terms, then every value.
            format!("(({column} IS NULL AND ({tail})) OR {column} IS NOT NULL)")
        };
    }
    let beyond = if desc { "<" } else { ">" };
    let bound = bind(at);
    if last {
        // The key: never NULL, and an index condition as it stands.
        return format!("({column} {beyond} {bound})");
    }
    let with_nulls = if nulls_follow {
        format!(" OR {column} IS NULL")
    } else {
        String::new()
    };
    let equal = bind(at);
    let tail = seek_from(at + 1, terms, key, nulls, bind);
    format!("({column} {beyond} {bound}{with_nulls} OR ({column} = {equal} AND ({tail})))")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seek(terms: &[(&str, bool)], key: &[Option<&str>], nulls: Nulls) -> String {
        let key: Vec<Option<String>> = key.iter().map(|k| k.map(str::to_owned)).collect();
        let mut bind = |i: usize| format!("<{}>", key[i].clone().unwrap_or_default());
        seek_condition(terms, &key, nulls, &mut bind)
    }

    #[test]
    fn seeks_put_nulls_where_the_database_orders_them() {
        let asc_desc = [("a", false), ("id", true)];
        assert_eq!(
            seek(&asc_desc, &[Some("30"), Some("7")], Nulls::Largest),
            "(a > <30> OR a IS NULL OR (a = <30> AND ((id < <7>))))"
        );
        assert_eq!(
            seek(&asc_desc, &[Some("30"), Some("7")], Nulls::Smallest),
            "(a > <30> OR (a = <30> AND ((id < <7>))))"
        );
        assert_eq!(
            seek(&asc_desc, &[None, Some("7")], Nulls::Largest),
            "(a IS NULL AND ((id < <7>)))"
        );
        assert_eq!(
            seek(&asc_desc, &[None, Some("7")], Nulls::Smallest),
            "((a IS NULL AND ((id < <7>))) OR a IS NOT NULL)"
        );
        let desc_asc = [("a", true), ("id", false)];
        assert_eq!(
            seek(&desc_asc, &[Some("30"), Some("7")], Nulls::Smallest),
            "(a < <30> OR a IS NULL OR (a = <30> AND ((id > <7>))))"
        );
        assert_eq!(
            seek(&desc_asc, &[None, Some("7")], Nulls::Smallest),
            "(a IS NULL AND ((id > <7>)))"
        );
        assert_eq!(
            seek(&[("id", true)], &[Some("9")], Nulls::Smallest),
            "(id < <9>)"
        );
        assert_eq!(
            seek(&[("id", true)], &[None::<&str>], Nulls::Smallest),
            "(1 = 0)"
        );
    }
}
