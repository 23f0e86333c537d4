//! Analysis between the model and the emitters: which domains compile, which way each type
//! travels, and which fields need a `Box` to break a cycle.
//!
//! It decides nothing about spelling (`names`) or upstream deviations (`fixup`).

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};

use crate::model::{Domain, Items, Property, Protocol, TypeDef};
use crate::GenError;

/// Which domains to generate.
#[derive(Debug, Clone)]
pub enum DomainSelection {
    /// Every domain in the protocol.
    All,
    /// Whole domains (`"Page"`) and single commands or events (`"Runtime.evaluate"`), with
    /// every type they reference, transitively. A domain that was not chosen whole compiles
    /// only its chosen methods and the types something chosen reaches.
    Only(Vec<String>),
}

/// A type key: `(domain, type id)`.
pub(crate) type TypeKey = (String, String);

/// Which serde directions a type needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Directions {
    /// Sent to the browser (reachable from command parameters).
    pub(crate) ser: bool,
    /// Read from the browser (reachable from returns or events).
    pub(crate) de: bool,
}

/// The analysed protocol, ready to emit.
pub(crate) struct Plan<'a> {
    /// Selected domains, in protocol order: chosen domains as they are, referenced ones cut
    /// down to the types the chosen ones reach.
    pub(crate) domains: Vec<Cow<'a, Domain>>,
    /// The domains compiled in part: chosen methods and the types something chosen reaches.
    referenced_only: HashSet<String>,
    types: HashMap<TypeKey, &'a TypeDef>,
    directions: HashMap<TypeKey, Directions>,
    /// `(domain, type, field)` of fields that must be boxed.
    boxed: HashSet<(String, String, String)>,
}

impl<'a> Plan<'a> {
    /// Analyses `protocol` for `selection`.
    pub(crate) fn new(
        protocol: &'a Protocol,
        selection: &DomainSelection,
    ) -> Result<Self, GenError> {
        let mut types = HashMap::new();
        for domain in &protocol.domains {
            for ty in &domain.types {
                types.insert((domain.domain.clone(), ty.id.clone()), ty);
            }
        }
        let by_name: HashMap<&str, &Domain> = protocol
            .domains
            .iter()
            .map(|d| (d.domain.as_str(), d))
            .collect();

        let mut referenced_only = HashSet::new();
        let domains: Vec<Cow<'a, Domain>> = match selection {
            DomainSelection::All => protocol.domains.iter().map(Cow::Borrowed).collect(),
            DomainSelection::Only(names) => {
                let mut whole = BTreeSet::new();
                let mut methods: BTreeSet<(&str, &str)> = BTreeSet::new();
                for name in names {
                    match name.split_once('.') {
                        None if by_name.contains_key(name.as_str()) => {
                            whole.insert(name.as_str());
                        }
                        None => return Err(GenError::UnknownDomain(name.clone())),
                        Some((domain, method)) => {
                            let known = by_name.get(domain).is_some_and(|d| {
                                d.commands.iter().any(|c| c.name == method)
                                    || d.events.iter().any(|e| e.name == method)
                            });
                            if !known {
                                return Err(GenError::UnknownMethod(name.clone()));
                            }
                            methods.insert((domain, method));
                        }
                    }
                }
                let reached = reached_types(protocol, &whole, &methods, &types);
                protocol
                    .domains
                    .iter()
                    .filter_map(|domain| {
                        let name = domain.domain.as_str();
                        if whole.contains(name) {
                            return Some(Cow::Borrowed(domain));
                        }
                        let part = Domain {
                            types: domain
                                .types
                                .iter()
                                .filter(|ty| reached.contains(&(name.to_string(), ty.id.clone())))
                                .cloned()
                                .collect(),
                            commands: domain
                                .commands
                                .iter()
                                .filter(|c| methods.contains(&(name, c.name.as_str())))
                                .cloned()
                                .collect(),
                            events: domain
                                .events
                                .iter()
                                .filter(|e| methods.contains(&(name, e.name.as_str())))
                                .cloned()
                                .collect(),
                            ..domain.clone()
                        };
                        let empty = part.types.is_empty()
                            && part.commands.is_empty()
                            && part.events.is_empty();
                        if empty {
                            return None;
                        }
                        referenced_only.insert(part.domain.clone());
                        Some(Cow::Owned(part))
                    })
                    .collect()
            }
        };

        let mut plan = Plan {
            domains,
            referenced_only,
            types,
            directions: HashMap::new(),
            boxed: HashSet::new(),
        };
        plan.check_refs()?;
        plan.compute_directions();
        plan.compute_boxes();
        Ok(plan)
    }

    /// Resolves a `$ref` written in `domain` to its key (see [`resolve`]).
    pub(crate) fn resolve(&self, domain: &str, reference: &str) -> TypeKey {
        resolve(domain, reference)
    }

    /// Whether `domain` compiles whole (it was chosen whole), not only in part.
    pub(crate) fn is_whole(&self, domain: &str) -> bool {
        !self.referenced_only.contains(domain)
    }

    /// The definition behind a key, if any.
    pub(crate) fn type_def(&self, key: &TypeKey) -> Option<&'a TypeDef> {
        self.types.get(key).copied()
    }

    /// The serde directions of a named type.
    pub(crate) fn directions(&self, key: &TypeKey) -> Directions {
        self.directions.get(key).copied().unwrap_or(Directions {
            ser: true,
            de: true,
        })
    }

    /// Whether `domain.owner.field` must be boxed to break a type cycle.
    pub(crate) fn is_boxed(&self, domain: &str, owner: &str, field: &str) -> bool {
        self.boxed
            .contains(&(domain.to_string(), owner.to_string(), field.to_string()))
    }

    fn check_refs(&self) -> Result<(), GenError> {
        let check = |domain: &str, path: String, prop_ref: Option<&String>| {
            if let Some(reference) = prop_ref {
                let key = resolve(domain, reference);
                if !self.types.contains_key(&key) {
                    return Err(GenError::UnknownRef {
                        path,
                        target: reference.clone(),
                    });
                }
            }
            Ok(())
        };
        for domain in &self.domains {
            let name = &domain.domain;
            let props = all_properties(domain);
            for (path, prop) in props {
                check(name, path.clone(), prop.reference.as_ref())?;
                if let Some(items) = &prop.items {
                    check(name, format!("{path}.items"), items.reference.as_ref())?;
                }
            }
            for ty in &domain.types {
                if let Some(items) = &ty.items {
                    check(
                        name,
                        format!("{name}.{}.items", ty.id),
                        items.reference.as_ref(),
                    )?;
                }
            }
        }
        Ok(())
    }

    fn compute_directions(&mut self) {
        let mut ser_roots = Vec::new();
        let mut de_roots = Vec::new();
        for domain in &self.domains {
            for command in &domain.commands {
                for prop in &command.parameters {
                    ser_roots.extend(prop_targets(&domain.domain, prop));
                }
                for prop in &command.returns {
                    de_roots.extend(prop_targets(&domain.domain, prop));
                }
            }
            for event in &domain.events {
                for prop in &event.parameters {
                    de_roots.extend(prop_targets(&domain.domain, prop));
                }
            }
        }
        self.propagate(ser_roots, de_roots);
        // Types no command or event reaches get both directions, and so do the types they
        // contain, so users can still build and read them.
        let unreached: Vec<TypeKey> = self
            .domains
            .iter()
            .flat_map(|d| d.types.iter().map(|t| (d.domain.clone(), t.id.clone())))
            .filter(|key| self.directions.get(key).is_none_or(|d| !d.ser && !d.de))
            .collect();
        self.propagate(unreached.clone(), unreached);
    }

    fn propagate(&mut self, ser_roots: Vec<TypeKey>, de_roots: Vec<TypeKey>) {
        for (roots, ser) in [(ser_roots, true), (de_roots, false)] {
            let mut todo = roots;
            while let Some(key) = todo.pop() {
                let dirs = self.directions.entry(key.clone()).or_default();
                let seen = if ser { dirs.ser } else { dirs.de };
                if seen {
                    continue;
                }
                if ser {
                    dirs.ser = true;
                } else {
                    dirs.de = true;
                }
                if let Some(ty) = self.types.get(&key) {
                    todo.extend(type_targets(&key.0, ty));
                }
            }
        }
    }

    /// Boxes every direct (non-array) field that stays inside a strongly connected component
    /// of the "contains" graph, so whole cycles are broken, not only self-references.
    fn compute_boxes(&mut self) {
        let mut nodes: Vec<TypeKey> = Vec::new();
        let mut index: HashMap<TypeKey, usize> = HashMap::new();
        for domain in &self.domains {
            for ty in &domain.types {
                let key = (domain.domain.clone(), ty.id.clone());
                index.insert(key.clone(), nodes.len());
                nodes.push(key);
            }
        }
        // Edges: field name and target node, for direct references only.
        let mut edges: Vec<Vec<(String, usize)>> = vec![Vec::new(); nodes.len()];
        for (node_idx, key) in nodes.iter().enumerate() {
            let Some(ty) = self.types.get(key) else {
                continue;
            };
            for prop in ty.properties.iter().flatten() {
                if let Some(reference) = &prop.reference {
                    let target = resolve(&key.0, reference);
                    if let Some(&target_idx) = index.get(&target) {
                        edges[node_idx].push((prop.name.clone(), target_idx));
                    }
                }
            }
        }
        let component = strongly_connected(&edges);
        for (node_idx, node_edges) in edges.iter().enumerate() {
            for (field, target_idx) in node_edges {
                if component[node_idx] == component[*target_idx] {
                    let (domain, id) = &nodes[node_idx];
                    self.boxed
                        .insert((domain.clone(), id.clone(), field.clone()));
                }
            }
        }
    }
}

/// Resolves a `$ref` written in `domain` to its key.
pub(crate) fn resolve(domain: &str, reference: &str) -> TypeKey {
    match reference.split_once('.') {
        Some((d, id)) => (d.to_string(), id.to_string()),
        None => (domain.to_string(), reference.to_string()),
    }
}

/// The types a property of `domain` refers to: its own `$ref` or its items'.
fn prop_targets(domain: &str, prop: &Property) -> Vec<TypeKey> {
    let mut res = Vec::new();
    if let Some(reference) = &prop.reference {
        res.push(resolve(domain, reference));
    }
    if let Some(items) = &prop.items {
        res.extend(items_target(domain, items));
    }
    res
}

fn items_target(domain: &str, items: &Items) -> Option<TypeKey> {
    items
        .reference
        .as_ref()
        .map(|reference| resolve(domain, reference))
}

/// The types the fields and items of `ty`, a type of `domain`, refer to.
fn type_targets(domain: &str, ty: &TypeDef) -> Vec<TypeKey> {
    let mut res: Vec<TypeKey> = ty
        .properties
        .iter()
        .flatten()
        .flat_map(|prop| prop_targets(domain, prop))
        .collect();
    res.extend(
        ty.items
            .as_deref()
            .and_then(|items| items_target(domain, items)),
    );
    res
}

/// Every property of a domain with its protocol path, for reference checks.
fn all_properties(domain: &Domain) -> Vec<(String, &Property)> {
    let name = &domain.domain;
    let mut res = Vec::new();
    for ty in &domain.types {
        for prop in ty.properties.iter().flatten() {
            res.push((format!("{name}.{}.{}", ty.id, prop.name), prop));
        }
    }
    for command in &domain.commands {
        for prop in &command.parameters {
            res.push((
                format!("{name}.{}.params.{}", command.name, prop.name),
                prop,
            ));
        }
        for prop in &command.returns {
            res.push((
                format!("{name}.{}.returns.{}", command.name, prop.name),
                prop,
            ));
        }
    }
    for event in &domain.events {
        for prop in &event.parameters {
            res.push((format!("{name}.{}.{}", event.name, prop.name), prop));
        }
    }
    res
}

/// Every type the `whole` domains and the chosen `methods` reach from their types, commands and
/// events, following `$ref`s across domains transitively.
fn reached_types(
    protocol: &Protocol,
    whole: &BTreeSet<&str>,
    methods: &BTreeSet<(&str, &str)>,
    types: &HashMap<TypeKey, &TypeDef>,
) -> HashSet<TypeKey> {
    let mut todo: Vec<TypeKey> = Vec::new();
    for domain in &protocol.domains {
        let name = domain.domain.as_str();
        let is_whole = whole.contains(name);
        if is_whole {
            for ty in &domain.types {
                todo.push((name.to_string(), ty.id.clone()));
            }
        }
        let chosen = |method: &str| is_whole || methods.contains(&(name, method));
        let commands = domain.commands.iter().filter(|c| chosen(&c.name));
        let props = commands
            .flat_map(|c| c.parameters.iter().chain(&c.returns))
            .chain(
                domain
                    .events
                    .iter()
                    .filter(|e| chosen(&e.name))
                    .flat_map(|e| &e.parameters),
            );
        todo.extend(props.flat_map(|prop| prop_targets(name, prop)));
    }
    let mut reached = HashSet::new();
    while let Some(key) = todo.pop() {
        let Some(ty) = types.get(&key) else { continue };
        if !reached.insert(key.clone()) {
            continue;
        }
        todo.extend(type_targets(&key.0, ty));
    }
    reached
}

fn strongly_connected(edges: &[Vec<(String, usize)>]) -> Vec<usize> {
    let n_nodes = edges.len();
    let mut index = vec![usize::MAX; n_nodes];
    let mut lowlink = vec![0; n_nodes];
    let mut on_stack = vec![false; n_nodes];
    let mut component = vec![usize::MAX; n_nodes];
    let mut stack = Vec::new();
    let mut next_index = 0;
    let mut n_components = 0;
    for start in 0..n_nodes {
        if index[start] != usize::MAX {
            continue;
        }
        // Each frame: node and the position of the next edge to visit.
        let mut frames = vec![(start, 0usize)];
        index[start] = next_index;
        lowlink[start] = next_index;
        next_index += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (node, ref mut edge_pos)) = frames.last_mut() {
            if let Some((_, target)) = edges[node].get(*edge_pos) {
                let target = *target;
                *edge_pos += 1;
                if index[target] == usize::MAX {
                    index[target] = next_index;
                    lowlink[target] = next_index;
                    next_index += 1;
                    stack.push(target);
                    on_stack[target] = true;
                    frames.push((target, 0));
                } else if on_stack[target] {
                    lowlink[node] = lowlink[node].min(index[target]);
                }
            } else {
                frames.pop();
                if let Some(&(parent, _)) = frames.last() {
                    lowlink[parent] = lowlink[parent].min(lowlink[node]);
                }
                if lowlink[node] == index[node] {
                    while let Some(member) = stack.pop() {
                        on_stack[member] = false;
                        component[member] = n_components;
                        if member == node {
                            break;
                        }
                    }
                    n_components += 1;
                }
            }
        }
    }
    component
}

#[cfg(test)]
mod tests {
    use super::strongly_connected;

    #[test]
    fn cycles_share_a_component_and_chains_do_not() {
        // 0 -> 1 -> 2 -> 0 is a cycle; 3 -> 0 is not part of it; 4 -> 4 is a self-loop.
        let edge = |t: usize| (String::new(), t);
        let edges = vec![
            vec![edge(1)],
            vec![edge(2)],
            vec![edge(0)],
            vec![edge(0)],
            vec![edge(4)],
        ];
        let comp = strongly_connected(&edges);
        assert_eq!(comp[0], comp[1]);
        assert_eq!(comp[1], comp[2]);
        assert_ne!(comp[3], comp[0]);
        assert_ne!(comp[4], comp[0]);
    }
}
