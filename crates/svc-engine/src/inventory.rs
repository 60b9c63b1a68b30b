//! What the data engine (jet-bridge 1.12.13) reads on a model's routes, taken from its source
//! (its model views and their mixins, its filter classes with `ModelFilterClass`, the
//! serializers and its router), each with the emulator's one decision. It is data: docs/contract.md's table
//! "What the engine reads" is written from it (`SVC_BLESS=1 cargo test -p svc-engine --lib
//! inventory` rewrites it; the test fails while the two differ), the conformance suite sends
//! every entry's example to every database and checks its decision, and `svc emulator verify`
//! draws requests from the examples.
//!
//! Examples are a method, a path below the model (`""`, `"{pk}"`, `"aggregate"`, ...) and a
//! query or body (a JSON body for `POST`, `PATCH` and `PUT`), where `{pk}` stands for a
//! record's key, `{key}` for the key column's name, `{text}` for a text column's name and
//! `{number}` for a number column's.

mod extra;

/// Where the engine reads an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A query parameter.
    Query,
    /// A key of a JSON body.
    Body,
    /// A route (a method and a path below the model).
    Route,
    /// A spelling of a value, wherever a column's field reads it.
    Value,
    /// A request header.
    Header,
}

/// A view of the engine's model routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// `GET models/{model}`.
    List,
    /// `GET models/{model}/{pk}`.
    Retrieve,
    /// `POST models/{model}`.
    Create,
    /// `PATCH` or `PUT models/{model}/{pk}`.
    Update,
    /// `DELETE models/{model}/{pk}`.
    Delete,
    /// `GET models/{model}/aggregate`.
    Aggregate,
    /// `GET models/{model}/group`.
    Group,
    /// `GET models/{model}/{pk}/get_siblings`.
    Siblings,
    /// `POST models/{model}/bulk_create`.
    BulkCreate,
    /// `POST models/{model}/reorder`.
    Reorder,
    /// `POST models/{model}/reset_order`.
    ResetOrder,
}

impl View {
    /// The view's name in docs/contract.md.
    pub fn name(self) -> &'static str {
        match self {
            View::List => "list",
            View::Retrieve => "retrieve",
            View::Create => "create",
            View::Update => "update",
            View::Delete => "delete",
            View::Aggregate => "aggregate",
            View::Group => "group",
            View::Siblings => "get_siblings",
            View::BulkCreate => "bulk_create",
            View::Reorder => "reorder",
            View::ResetOrder => "reset_order",
        }
    }
}

/// The emulator's one decision on an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Served as the engine serves it: the same status, rows, order, count and value types.
    Served,
    /// Refused with a `4xx` whose body (and `svc-error-decision` header) carries
    /// `"error_decision": "stricter"`: the engine fails on it (`5xx`) or misreads it, for the
    /// reason given. `--lenient` answers as the engine does where it can.
    Stricter(&'static str),
    /// Answered otherwise than the engine, for the reason given (docs/contract.md says where).
    Departure(&'static str),
}

/// One thing the engine reads.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// Where it is read.
    pub place: Place,
    /// Its spelling (`{field}` is any field of the model, `{lookup}` a lookup of its family).
    pub name: &'static str,
    /// The views that read it.
    pub views: &'static [View],
    /// How the engine reads it.
    pub reading: &'static str,
    /// The emulator's decision.
    pub decision: Decision,
    /// A request that shows the decision: method, path below the model, query or JSON body.
    pub example: Option<(&'static str, &'static str, &'static str)>,
}

const FILTERING: &[View] = &[
    View::List,
    View::Retrieve,
    View::Update,
    View::Delete,
    View::Aggregate,
    View::Group,
    View::Siblings,
    View::Reorder,
    View::ResetOrder,
];
const LIST: &[View] = &[View::List];
const WRITES: &[View] = &[View::Create, View::Update, View::BulkCreate];
const VALUES: &[View] = &[
    View::List,
    View::Retrieve,
    View::Create,
    View::Update,
    View::Delete,
    View::Aggregate,
    View::Group,
    View::Siblings,
    View::BulkCreate,
    View::Reorder,
    View::ResetOrder,
];
const Y: &[View] = &[View::Aggregate, View::Group];
const GROUP: &[View] = &[View::Group];
const NONE: &[View] = &[];

/// Everything the engine reads on a model's routes, with the emulator's decisions.
pub const INVENTORY: &[Entry] = &[
    Entry {
        place: Place::Query,
        name: "{field}, {field}__exact",
        views: FILTERING,
        reading: "equality, through the field's filter field; `__exact` wins over the bare name; an empty value filters nothing",
        decision: Decision::Served,
        example: Some(("GET", "", "{text}__exact=zzz")),
    },
    Entry {
        place: Place::Query,
        name: "{field}__{lookup}",
        views: FILTERING,
        reading: "the lookups of the field's family (gt gte lt lte icontains in istartswith iendswith isnull isempty json_icontains)",
        decision: Decision::Served,
        example: Some(("GET", "", "{number}__gte=0&{text}__isnull=false")),
    },
    Entry {
        place: Place::Query,
        name: "exclude__{field}[__{lookup}]",
        views: FILTERING,
        reading: "the negation (`NOT`), NULLs matching neither",
        decision: Decision::Served,
        example: Some(("GET", "", "exclude__{text}__in=zzz")),
    },
    Entry {
        place: Place::Query,
        name: "{field}__{lookup} outside the family",
        views: FILTERING,
        reading: "ignored",
        decision: Decision::Stricter(
            "a filter the engine ignores selects every record: a misspelt lookup would pass unseen",
        ),
        example: Some(("GET", "", "{text}__gt=a")),
    },
    Entry {
        place: Place::Query,
        name: "a name the model lacks",
        views: FILTERING,
        reading: "ignored",
        decision: Decision::Stricter(
            "a filter the engine ignores selects every record: a misspelt field would pass unseen",
        ),
        example: Some(("GET", "", "no_such_field=1")),
    },
    Entry {
        place: Place::Query,
        name: "isnull, isempty, boolean values outside t y yes true on 1 / f n no false off 0",
        views: FILTERING,
        reading: "Python's truth value: any other text is true",
        decision: Decision::Stricter("`isnull=maybe` would read as true"),
        example: Some(("GET", "", "{text}__isnull=maybe")),
    },
    Entry {
        place: Place::Query,
        name: "_order_by, _order_by__exact",
        views: FILTERING,
        reading: "comma-separated names, `-` for descending, the key last; one character selects nothing, in every view",
        decision: Decision::Served,
        example: Some(("GET", "{pk}", "_order_by__exact=-{key}")),
    },
    Entry {
        place: Place::Query,
        name: "_order_by with an unknown name, an empty part, or given twice",
        views: FILTERING,
        reading: "fails (500)",
        decision: Decision::Stricter("the engine fails"),
        example: Some(("GET", "", "_order_by=no_such_field")),
    },
    Entry {
        place: Place::Query,
        name: "_search, _search__exact",
        views: FILTERING,
        reading: "numbers whole, text in part (`LIKE`); `__exact` wins, an empty one searches nothing",
        decision: Decision::Served,
        example: Some(("DELETE", "{pk}", "_search__exact=zzz-no-such-text")),
    },
    Entry {
        place: Place::Query,
        name: "_search given twice",
        views: FILTERING,
        reading: "fails (500)",
        decision: Decision::Stricter("the engine fails"),
        example: Some(("GET", "", "_search=a&_search=b")),
    },
    Entry {
        place: Place::Query,
        name: "_search__{other suffix}, _order_by__{other suffix}",
        views: FILTERING,
        reading: "no parameter the engine reads: ignored",
        decision: Decision::Served,
        example: Some(("GET", "", "_search__icontains=zzz")),
    },
    Entry {
        place: Place::Query,
        name: "exclude___search, exclude___order_by",
        views: FILTERING,
        reading: "a filter on a field the model lacks: ignored",
        decision: Decision::Stricter("a filter the engine ignores selects every record"),
        example: Some(("GET", "", "exclude___search=a")),
    },
    Entry {
        place: Place::Query,
        name: "_relation, _relation__exact",
        views: FILTERING,
        reading: "`col.table.col|...|col.v1,v2`: the records a path of joins relates to one of the values",
        decision: Decision::Served,
        example: Some(("GET", "", "_relation__exact={key}.{pk}")),
    },
    Entry {
        place: Place::Query,
        name: "_relation naming what the resource lacks, or with joins in an aggregate or group",
        views: FILTERING,
        reading: "fails (500), or counts joined rows",
        decision: Decision::Stricter("the engine fails or miscounts"),
        example: Some(("GET", "", "_relation=no_such_column.x")),
    },
    Entry {
        place: Place::Query,
        name: "_m2m, _m2m__exact",
        views: FILTERING,
        reading: "`split(',', 2)`: empty filters nothing, without a comma selects nothing",
        decision: Decision::Served,
        example: Some(("GET", "", "_m2m__exact=tags")),
    },
    Entry {
        place: Place::Query,
        name: "_m2m=relation_table,value",
        views: FILTERING,
        reading: "fails (500) on a model with a relationship, selects nothing on others",
        decision: Decision::Stricter("it can only fail or select nothing"),
        example: Some(("GET", "", "_m2m=tags,1")),
    },
    Entry {
        place: Place::Query,
        name: "_segment",
        views: FILTERING,
        reading: "reads saved segments from a body the records views do not have: fails (500) on any non-empty value",
        decision: Decision::Stricter("the engine fails"),
        example: Some(("GET", "", "_segment=s")),
    },
    Entry {
        place: Place::Query,
        name: "_semantic_search",
        views: FILTERING,
        reading: "text that is not JSON filters nothing; JSON fails unless it names a pgvector column",
        decision: Decision::Served,
        example: Some(("GET", "", "_semantic_search=plain")),
    },
    Entry {
        place: Place::Query,
        name: "page",
        views: LIST,
        reading: "Python's `int()`; below 1 is 1; not a number is 1",
        decision: Decision::Served,
        example: Some(("GET", "", "page=%2B2&_per_page=1")),
    },
    Entry {
        place: Place::Query,
        name: "page whose offset passes the database's (2^63 - 1; MySQL 2^64 - 1)",
        views: LIST,
        reading: "fails (500)",
        decision: Decision::Stricter("the engine fails"),
        example: Some(("GET", "", "page=9223372036854775807")),
    },
    Entry {
        place: Place::Query,
        name: "_per_page",
        views: &[View::List, View::Group],
        reading: "Python's `int()`, clamped to 1..=10000 (group: 1..=100000, default 10000)",
        decision: Decision::Served,
        example: Some(("GET", "", "_per_page=0")),
    },
    Entry {
        place: Place::Query,
        name: "_no_pagination",
        views: LIST,
        reading: "any non-empty value: a bare array of at most 10000 records",
        decision: Decision::Served,
        example: Some(("GET", "", "_no_pagination=0")),
    },
    Entry {
        place: Place::Query,
        name: "tz",
        views: FILTERING,
        reading: "the session's time zone: PostgreSQL shows date-times in it; SQLite ignores it",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Query,
        name: "tz on MySQL",
        views: FILTERING,
        reading: "kept on the pooled connection for later requests",
        decision: Decision::Stricter("one request would change the answers of the next ones"),
        example: None, // MySQL only: `tz_is_read_as_the_engine_reads_it_on_each_database`
    },
    Entry {
        place: Place::Query,
        name: "page, _per_page, _no_pagination, tz given twice, or with white space around",
        views: FILTERING,
        reading: "`get_argument`: the last value, stripped (Python's `str.strip()`), from the query only, whatever the method",
        decision: Decision::Served,
        example: Some(("GET", "", "_per_page=9&_per_page=1&_no_pagination=%20")),
    },
    Entry {
        place: Place::Query,
        name: "draft",
        views: FILTERING,
        reading: "a filter on a `draft` field",
        decision: Decision::Departure(
            "the SDK's draft switch, sent on every request: never a filter (`draft__exact` filters)",
        ),
        example: None,
    },
    Entry {
        place: Place::Query,
        name: "_y_func, _y_column",
        views: Y,
        reading: "count sum min max avg (any case, trimmed); the column defaults to the key",
        decision: Decision::Served,
        example: Some(("GET", "aggregate", "_y_func=%20COUNT%20")),
    },
    Entry {
        place: Place::Query,
        name: "_y_column or _x_column the model lacks",
        views: Y,
        reading: "fails (500)",
        decision: Decision::Stricter("the engine fails"),
        example: Some(("GET", "aggregate", "_y_func=count&_y_column=no_such_field")),
    },
    Entry {
        place: Place::Query,
        name: "_x_column, _x_lookup",
        views: GROUP,
        reading: "repeatable: keys `group`, `group_2`, ...; date lookups by SQL's date functions",
        decision: Decision::Served,
        example: Some(("GET", "group", "_x_column={text}&_y_func=count")),
    },
    Entry {
        place: Place::Body,
        name: "{field}",
        views: WRITES,
        reading: "through the column's serializer field",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Body,
        name: "a key the model lacks",
        views: WRITES,
        reading: "ignored",
        decision: Decision::Stricter("a misspelt field would be dropped unseen"),
        example: Some(("POST", "", r#"{"no_such_field": 1}"#)),
    },
    Entry {
        place: Place::Body,
        name: "an update's body that is not an object",
        views: &[View::Update],
        reading: "fails (500)",
        decision: Decision::Stricter("the engine fails"),
        example: Some(("PATCH", "{pk}", "[1]")),
    },
    // A write's body by its content type (svc_engine::body::incoming; the examples are JSON
    // bodies, which these are not or which serde_json cannot hold: tests/write_bodies.rs sends
    // them to every database).
    Entry {
        place: Place::Header,
        name: "Content-Type, Content_Type of a write",
        views: WRITES,
        reading: "JSON when the value starts with `application/json` (case counts: `application/json-patch+json` and `; charset=...` too, not `Application/JSON`; a `Content_Type` header too, the name that came last winning); else the fields Tornado read from `Content-Type`: a form or a multipart body; another type: no field",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Body,
        name: "a JSON body: empty, a byte-order mark, a repeated key, an integer of more than 4300 digits",
        views: WRITES,
        reading: "`json.loads`: `{}`; the `400` \"Incorrect JSON body\"; the last value; the `400`",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Body,
        name: "a create's body that is not an object",
        views: &[View::Create],
        reading: "no field is read: a record of the columns' defaults",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Body,
        name: "a JSON body that is not UTF-8 (surrogates aside), or nests more than 964 arrays and objects",
        views: WRITES,
        reading: "fails (500) before any view runs (`UnicodeDecodeError`, `RecursionError`)",
        decision: Decision::Stricter("the engine fails"),
        example: None,
    },
    Entry {
        place: Place::Body,
        name: "a lone surrogate (\\ud800, or its UTF-8 bytes) in a JSON body",
        views: WRITES,
        reading: "kept: a text column fails (500), a JSON column keeps it, a boolean reads it as text, a date parser reads around it; ignored under a key the model lacks",
        decision: Decision::Stricter(
            "the emulator cannot hold it as text (lenient: the engine's 500 in a text column, its reading in a boolean, ignored under an unknown key)",
        ),
        example: None,
    },
    Entry {
        place: Place::Body,
        name: "a JSON column's value nesting more than 489 arrays and objects (490 empty ones pass)",
        views: WRITES,
        reading: "written, then the answer fails (500): Python's recursion limit in the encoder (as text, deeper still: a 400 or a 500 without writing)",
        decision: Decision::Stricter("the engine writes and then fails"),
        example: None,
    },
    Entry {
        place: Place::Body,
        name: "a form's fields (application/x-www-form-urlencoded)",
        views: WRITES,
        reading: "Tornado's `parse_qs_bytes`: `+` a space, `%XX` a byte, a pair without `=` blank, a repeated key a list (a field of one value joins it with `,`, a JSON column keeps it); keys are Latin-1 text (`%C3%A9` is `Ã©`)",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Body,
        name: "a multipart body's fields (multipart/form-data)",
        views: WRITES,
        reading: "Tornado's `parse_multipart_form_data`: the first `boundary=` parameter (lowercase, quotes dropped) up to the last `--BOUNDARY--`; each part's `Content-Disposition: form-data; name=...` (RFC 2231 `name*=` decoded), its value as sent; a repeated name a list",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Body,
        name: "a form or multipart body with a Content-Encoding header, a form not UTF-8 or holding raw text beyond Latin-1, a multipart body without a boundary= or its closing boundary, a part Tornado skips (no blank line after its headers, not form-data, no name) or stops at (headers not UTF-8), a file (a part with a filename)",
        views: WRITES,
        reading: "no field, or not that part's (a file is not a field of a record)",
        decision: Decision::Stricter("fields sent would be dropped unseen"),
        example: None,
    },
    Entry {
        place: Place::Body,
        name: "a form or multipart value that is not UTF-8 (a form's raw non-ASCII text is read as its Latin-1 bytes)",
        views: WRITES,
        reading: "kept as bytes: the serializer fails (500) on one value, joins several with Python's `b'\\xff'` text, a JSON column fails to encode them (400); ignored under a key the model lacks",
        decision: Decision::Stricter(
            "the engine fails or writes `b'...'` text (lenient: as the engine)",
        ),
        example: None,
    },
    Entry {
        place: Place::Body,
        name: "a multipart part naming its field in RFC 2231 form in another charset than UTF-8, ASCII or Latin-1",
        views: WRITES,
        reading: "the name decoded in that charset",
        decision: Decision::Stricter("the emulator does not decode that charset (lenient too)"),
        example: None,
    },
    Entry {
        place: Place::Body,
        name: "{field}[__{lookup}], exclude__... in a POST's body",
        views: FILTERING,
        reading: "when the method the views see is `POST` (`get_records`, or the override): the body's member first (any JSON type; `null` is none), then the query; text as the query's; numbers, booleans, objects as Python's `str()` (a JSON column keeps the value); a list as a repeated key (`in` takes its items unsplit); `[]`, `{}`, `\"\"` filter nothing; `exact` of `[null]` is `IS NULL`",
        decision: Decision::Served,
        example: Some((
            "POST",
            "get_records",
            r#"{"{number}": [30, 18], "{text}__in": ["Paris", 5], "exclude__{text}": null, "{number}__isnull": 0}"#,
        )),
    },
    Entry {
        place: Place::Body,
        name: "a date's exact gt gte lt lte given what is not text, null in an `in` list, a list whose first item is null for icontains and its kin",
        views: FILTERING,
        reading: "the value passed to the database unread, compared with SQL's NULL, or read as the text `None`",
        decision: Decision::Stricter(
            "the engine misreads: the answer depends on the database, or matches no row",
        ),
        example: Some(("POST", "get_records", r#"{"{text}__in": [null, "Paris"]}"#)),
    },
    Entry {
        place: Place::Body,
        name: "a list or an object read as a boolean (isnull, isempty, boolean columns), `[null]` for gt gte lt lte, what is not text for a binary column, a body that is not an object",
        views: FILTERING,
        reading: "fails (500)",
        decision: Decision::Stricter("the engine fails"),
        example: Some(("POST", "get_records", r#"{"{number}__isnull": {"a": 1}}"#)),
    },
    Entry {
        place: Place::Body,
        name: "_order_by, _search, _relation, _m2m, _segment, _semantic_search (and __exact) in a POST's body",
        views: FILTERING,
        reading: "read as filters: from the body first (`NAME__exact`, then `NAME`), as the query's text",
        decision: Decision::Served,
        example: Some((
            "POST",
            "get_records",
            r#"{"_order_by": "-{number}", "_search": "a"}"#,
        )),
    },
    Entry {
        place: Place::Body,
        name: "_order_by, _search, _relation, _m2m, _segment, _semantic_search in a POST's body, not text",
        views: FILTERING,
        reading: "fails (500): `_order_by` of one member selects nothing; `_search` of a number is compared as each database does (PostgreSQL fails)",
        decision: Decision::Stricter("the engine fails, or answers as the database does"),
        example: Some(("POST", "get_records", r#"{"_search": 30}"#)),
    },
    Entry {
        place: Place::Body,
        name: "page, _per_page, _no_pagination, tz, a key the model lacks, in a POST's body",
        views: FILTERING,
        reading: "ignored: paging and `tz` are read from the query only",
        decision: Decision::Stricter(
            "a page, a time zone or a misspelt filter in the body would pass unseen",
        ),
        example: Some(("POST", "get_records", r#"{"page": 2}"#)),
    },
    Entry {
        place: Place::Body,
        name: "a JSON body on any records view",
        views: FILTERING,
        reading: "parsed whatever the method (a `GET`'s too): text that is not JSON is a `400` \"Incorrect JSON body\"",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Header,
        name: "X-HTTP-Method-Override",
        views: FILTERING,
        reading: "replaces the method the views see, after routing (any text, exactly; repeated values joined by `,`): `POST` reads the filters from the body (a `GET`'s too); other values change nothing",
        decision: Decision::Served,
        example: None, // a header: `the_method_override_changes_only_where_filters_are_read`
    },
    Entry {
        place: Place::Header,
        name: "X-HTTP-Method-Override: OPTIONS",
        views: FILTERING,
        reading: "skips the credential check: served without credentials",
        decision: Decision::Stricter(
            "it would let a caller without credentials read, write and delete records (lenient mode too)",
        ),
        example: None,
    },
    Entry {
        place: Place::Header,
        name: "X-HTTP-Method-Override: POST on an update",
        views: &[View::Update],
        reading: "the body's fields are filters too: the record is updated only where it already holds the new values",
        decision: Decision::Stricter("the engine misreads the update's body as filters"),
        example: None,
    },
    Entry {
        place: Place::Route,
        name: "POST get_records",
        views: LIST,
        reading: "a list (the engine's router maps it to `list`): the filters from the body first, paging from the query; `next` and `previous` link to `get_records`",
        decision: Decision::Served,
        example: Some(("POST", "get_records", r#"{"{text}": "Paris"}"#)),
    },
    Entry {
        place: Place::Route,
        name: "GET, POST, DELETE where the path maps no such action (GET, DELETE get_records; POST {pk}; DELETE on the list, aggregate, group; POST get_records/aggregate, get_records/group)",
        views: NONE,
        reading: "the handler's own method runs the view set's `dispatch` of its name, which the view set lacks: `404`, after the credential check (`403`) and the reading of the body (not JSON: `400`); not a record keyed `get_records`",
        decision: Decision::Served,
        example: Some(("POST", "{pk}", "{}")),
    },
    Entry {
        place: Place::Route,
        name: "PUT, PATCH on a path of no record (the list, get_records, aggregate, group and their get_records forms, bulk_create, reorder, reset_order)",
        views: NONE,
        reading: "the view set's `put` and `patch` run its update, which reads the filters as a list does and then fails without a record key (500), after the credential check; an unknown model is `404`",
        decision: Decision::Stricter("the engine fails: `405`, marked (lenient: `500`)"),
        example: Some(("PUT", "", "{}")),
    },
    Entry {
        place: Place::Route,
        name: "PUT, PATCH {pk}/get_siblings",
        views: NONE,
        reading: "the view set's update runs on the record: written, then fails (500: `put` and `patch` answer nothing); a missing record is `404`",
        decision: Decision::Stricter(
            "the engine writes and then fails: `405`, marked, nothing written",
        ),
        example: Some(("PATCH", "{pk}/get_siblings", "{}")),
    },
    Entry {
        place: Place::Route,
        name: "GET get_records/aggregate, get_records/group",
        views: &[View::Aggregate, View::Group],
        reading: "the extra actions, which the engine's router also registers under `get_records`",
        decision: Decision::Served,
        example: Some(("GET", "get_records/aggregate", "_y_func=count")),
    },
    Entry {
        place: Place::Route,
        name: "HEAD on a records route",
        views: NONE,
        reading: "Tornado's own `head` raises its `405`, which the view's error page answers with a `500`, whatever the credentials",
        decision: Decision::Stricter(
            "the engine fails (the marker is in the `svc-error-decision` header)",
        ),
        example: Some(("HEAD", "", "")),
    },
    Entry {
        place: Place::Route,
        name: "a method Tornado does not take (TRACE, CONNECT, QUERY, FOO, ...) on a records route",
        views: NONE,
        reading: "Tornado's `405`, which the view's error page answers with a `500`, whatever the credentials",
        decision: Decision::Stricter("the engine fails: `405`, marked (lenient: `500`)"),
        example: Some(("TRACE", "", "")),
    },
    extra::SIBLINGS,
    extra::SIBLINGS_SHARED_KEY,
    extra::BULK_CREATE,
    extra::BULK_CREATE_REFUSED,
    extra::REORDER,
    extra::RESET_ORDER,
    extra::MOVES_FAIL,
    extra::MOVES_NOT_NUMBERS,
    extra::REORDER_UNEVALUABLE,
    extra::REORDER_LOADED,
    extra::MOVES_BOTH,
    extra::RESET_ORDER_NO_KEY,
    Entry {
        place: Place::Route,
        name: "OPTIONS, and CORS headers on every answer",
        views: NONE,
        reading: "`204` without credentials, on every route, whatever the request asks (a browser's preflight, with `Origin` and `Access-Control-Request-Method`, gets the same headers); `Access-Control-*` headers on every answer",
        decision: Decision::Served,
        example: Some(("OPTIONS", "{pk}", "")),
    },
    Entry {
        place: Place::Value,
        name: "date-times YYYY-MM-DD[THH:MM[:SS[.ffffff]]][Z|±HH:MM]",
        views: VALUES,
        reading: "dateparser",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Value,
        name: "other date-time spellings (5 March 2024 10:11, now, 2024/03/05, 2024-13-01, 1704153600)",
        views: VALUES,
        reading: "dateparser, by its language detection, its guess of the parts' order, the clock and the engine's time zone (a number is seconds since the epoch there)",
        decision: Decision::Stricter(
            "the reading depends on the language and order guessed, on today's date and on the engine's own time zone",
        ),
        example: None,
    },
    Entry {
        place: Place::Value,
        name: "a date filter's value",
        views: FILTERING,
        reading: "`strftime('%Y-%m-%d')` of dateparser's reading, the year not padded (`0099-12-31` is `99-12-31`), read by the database",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Value,
        name: "each item of a date filter's in list",
        views: FILTERING,
        reading: "the text as given (the column's field is a `CharField`), read by the database (`2024-03-05T10:11:12` is 2024-03-05 to PostgreSQL, no date to SQLite's text, a date-time to MySQL)",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Value,
        name: "numbers",
        views: FILTERING,
        reading: "Python's `float()` of the trimmed text (`1e2`, `1_000`, `inf`)",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Value,
        name: "a written value's field",
        views: WRITES,
        reading: "the serializer field `get_column_data_type` picks by `str(column.type).upper()`, first rule of the engine's table first: INTEGER SMALLINT BIGINT TINYINT integer; FLOAT, a bare DECIMAL, DOUBLE_PRECISION, MONEY float; BOOLEAN BIT boolean; TIMESTAMP... DATETIME... date-time; JSON... ARRAY JSON; BINARY... VARBINARY... binary; anything else (REAL, NUMERIC..., DECIMAL(p, s), DOUBLE, MEDIUMINT, DATE, TIME, UUID, text, enums) a CharField; the same field writes the record's value",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Value,
        name: "integers (an integer field)",
        views: WRITES,
        reading: "Python's `int()` of the stripped text (`\" 3 \"`, `+3`, `1_000`, digits of any script; `3.0` is a 400), `true`/`false` as 1/0",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Value,
        name: "floats (a float field)",
        views: WRITES,
        reading: "Python's `float()` of the stripped text (`1e3`, `nan`, `inf`, `1_0`), `true`/`false` in any case as 1/0",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Value,
        name: "booleans (a boolean field)",
        views: WRITES,
        reading: "the words `t T y Y yes YES true True TRUE on On ON 1` and `f F n N no NO false False FALSE off Off OFF 0`, else Python's truth value (`FaLsE` is true, `null` and `\"\"` false); PostgreSQL refuses the bool for a `bit` column",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Value,
        name: "text for the database (a CharField)",
        views: WRITES,
        reading: "Python's `str()` of the value (`12` is `12`, `true` is `True`, a list its non-null items joined by commas), then the column's type: SQLAlchemy's `float()` for SQLite's REAL and NUMERIC, Python's `uuid.UUID` for PostgreSQL's `uuid`, else the server's input",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Value,
        name: "JSON (a JSON field)",
        views: WRITES,
        reading: "text read as JSON where it is JSON, else kept as text; other values as they are",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Value,
        name: "hex bytes (a binary field: MySQL's BINARY, VARBINARY)",
        views: WRITES,
        reading: "`binascii.unhexlify` of the text (two digits a byte, either case)",
        decision: Decision::Served,
        example: None,
    },
    Entry {
        place: Place::Value,
        name: "anything but hex text for a binary field (null, numbers, odd or non-hex text)",
        views: WRITES,
        reading: "`binascii.unhexlify` raises: the engine fails (500)",
        decision: Decision::Stricter("the engine fails"),
        example: None,
    },
    Entry {
        place: Place::Value,
        name: "integers past 64 bits on SQLite, text holding NUL on PostgreSQL, a JSON object for a boolean",
        views: VALUES,
        reading: "the driver fails (500)",
        decision: Decision::Stricter("the engine fails"),
        example: None,
    },
];

/// The table of docs/contract.md, written from [`INVENTORY`].
pub fn contract_table() -> String {
    let mut out = String::from(
        "| Where | Name | Views | How the engine reads it | Decision |\n| --- | --- | --- | --- | --- |\n",
    );
    for e in INVENTORY {
        let place = match e.place {
            Place::Query => "query",
            Place::Body => "body",
            Place::Route => "route",
            Place::Value => "value",
            Place::Header => "header",
        };
        let views = if e.views.is_empty() {
            "-".to_owned()
        } else {
            e.views
                .iter()
                .map(|v| v.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let decision = match e.decision {
            Decision::Served => "served".to_owned(),
            Decision::Stricter(why) => format!("**stricter**: {why}"),
            Decision::Departure(why) => format!("departure: {why}"),
        };
        let name = e.name.replace('|', "\\|");
        let reading = e.reading.replace('|', "\\|");
        out.push_str(&format!(
            "| {place} | `{name}` | {views} | {reading} | {decision} |\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEGIN: &str = "<!-- inventory: written from crates/svc-engine/src/inventory.rs -->\n";
    const END: &str = "<!-- end of inventory -->";

    #[test]
    fn the_contracts_table_is_written_from_the_inventory() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/contract.md");
        let doc = std::fs::read_to_string(path).unwrap_or_default();
        let (Some(begin), Some(end)) = (doc.find(BEGIN), doc.find(END)) else {
            panic!("docs/contract.md has no inventory markers ({BEGIN:?} ... {END:?})");
        };
        let written = &doc[begin + BEGIN.len()..end];
        let table = contract_table();
        if written != table {
            if std::env::var_os("SVC_BLESS").is_some() {
                let new = format!("{}{BEGIN}{table}{}", &doc[..begin], &doc[end..]);
                std::fs::write(path, new).unwrap_or_else(|e| panic!("{e}"));
            } else {
                panic!(
                    "docs/contract.md's inventory table differs from crates/svc-engine/src/\
                     inventory.rs: run `SVC_BLESS=1 cargo test -p svc-engine --lib inventory`"
                );
            }
        }
    }

    #[test]
    fn every_refusal_by_design_says_why() {
        for e in INVENTORY {
            if let Decision::Stricter(why) | Decision::Departure(why) = e.decision {
                assert!(!why.trim().is_empty(), "{}", e.name);
            }
        }
    }
}
