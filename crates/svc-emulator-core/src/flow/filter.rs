//! A selection's `WHERE` clause, as the engine builds it on any database server: the promoted
//! key's `IS NOT NULL`, each filter's condition in the query's order, `_search`, `_relation`,
//! and `tz` read before any of them. What a lookup is in a database's SQL is its own
//! ([`Dialect`]).

use std::cell::RefCell;

use crate::dialect::Dialect;
use crate::dialect::bind::Binds;
use crate::dialect::clause::{Where, not, where_clause};
use crate::dialect::lookup::Filter;
use crate::dialect::relation::{Related, relation_condition};
use svc_engine::plan::Plan;
use svc_engine::table::{Column, Table};
use svc_engine::{EngineError, Selection};

/// The `WHERE` clause of a selection, as the engine builds it.
pub fn build_where<L: Dialect + ?Sized>(
    model: &L::Model,
    selection: &Selection,
    related: &Related<'_, L::Model>,
) -> Result<Where<Binds>, EngineError> {
    L::time_zone(selection, related.use_)?;
    let mut params = Binds::default();
    let mut fields = model.filter_fields();
    // A body's filter value that is not text fails on a binary column (svc-engine's
    // `body_filters`): only the dialect knows which columns are.
    for (f, column) in fields.iter_mut().zip(model.columns()) {
        f.binary = L::binary(column);
    }
    let plan = Plan::of(
        model.table_name(),
        &fields,
        selection,
        model.has_relationships(),
    );
    // A promoted key leaves out rows without one, in every view (the engine's queryset of such
    // a model is `filter(pk.isnot(None))`).
    let mut conds: Vec<String> = model
        .promoted_key()
        .then(|| L::key_present(model.pk_field()))
        .into_iter()
        .collect();
    // What fails only when the statement runs (`Filter::fails_when_run`).
    let fails_when_run = RefCell::new(None);
    for c in &plan.conditions {
        let filter = Filter {
            key: &c.key,
            field: &model.columns()[c.field],
            lenient: selection.lenient,
            fails_when_run: &fails_when_run,
        };
        let condition = L::condition(&filter, c.lookup, c.arg(), &mut params)?;
        conds.push(if c.exclude {
            not(&condition)
        } else {
            condition
        });
    }
    let declared = plan.declared?;
    if let Some(text) = declared.search {
        conds.extend(L::search(model, text, &mut params));
    }
    if let Some(path) = &declared.relation {
        let condition = relation_condition(
            model,
            path,
            related,
            selection.lenient,
            &L::RELATED,
            |f, raw| {
                if L::binary(f) {
                    // The driver refuses the value when the statement runs.
                    let filter = Filter {
                        key: "_relation",
                        field: f,
                        lenient: selection.lenient,
                        fails_when_run: &fails_when_run,
                    };
                    return Ok(filter.fails_when_run(format!(
                        "_relation compares the binary field {:?} with a text, which the data \
                         engine cannot send to the database (it fails with a 500).",
                        f.name()
                    )));
                }
                Ok(L::relation_value(f, raw, &mut params))
            },
        )?;
        conds.push(condition);
    }
    // SQLAlchemy writes `... AND false` as `false`: a selection that selects nothing sends
    // none of its conditions, and none of them fails.
    if declared.nothing {
        return Ok(Where::nothing(L::NEVER));
    }
    if let Some(failure) = fails_when_run.into_inner() {
        return Err(failure);
    }
    Ok(Where {
        sql: where_clause(&conds),
        params,
    })
}
