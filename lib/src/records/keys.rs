//! Whether a JSON text gives one object the same key twice. Read as a map,
//! the last of them counts, where a reader in front (a gateway, a policy
//! proxy) may take the first, so that the two read one message as two:
//! a `status` call let through that runs `search` (audit 274).

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The place of the first key some object of `json` gives twice
/// (`id`, `params.arguments.query`, `items[2].name`), or None when each is
/// given once, or when `json` is not JSON (which its reader says).
pub fn key_given_twice(json: &[u8]) -> Option<String> {
    let mut reader = serde_json::Deserializer::from_slice(json);
    Walk { place: &Place::Top }.deserialize(&mut reader).ok().flatten()
}

/// Where a value is, as a chain to the top: written out only for a key
/// given twice, so that a long message's many keys cost no string each
/// (review 278: a 1 MB line of deep long keys took 3 s).
enum Place<'a> {
    Top,
    Key(&'a Place<'a>, &'a str),
    Item(&'a Place<'a>, usize),
}

impl Place<'_> {
    fn written(&self) -> String {
        match self {
            Place::Top => String::new(),
            Place::Key(Place::Top, key) => key.to_string(),
            Place::Key(outer, key) => format!("{}.{key}", outer.written()),
            Place::Item(outer, at) => format!("{}[{at}]", outer.written()),
        }
    }
}

/// One value of the text, at `place`, walked for a key given twice.
struct Walk<'p> {
    place: &'p Place<'p>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = Option<String>;

    fn deserialize<D: Deserializer<'de>>(self, reader: D) -> Result<Self::Value, D::Error> {
        reader.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = HashSet::new();
        let mut first = None;
        while let Some(key) = map.next_key::<String>()? {
            if first.is_some() {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let place = Place::Key(self.place, &key);
            let inner = map.next_value_seed(Walk { place: &place })?;
            first = match seen.contains(&key) {
                true => Some(place.written()),
                false => inner,
            };
            seen.insert(key);
        }
        Ok(first)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut first = None;
        let mut at = 0;
        loop {
            let place = Place::Item(self.place, at);
            let found = match first {
                Some(_) => seq.next_element::<IgnoredAny>()?.map(|_| None),
                None => seq.next_element_seed(Walk { place: &place })?,
            };
            let Some(found) = found else { return Ok(first) };
            first = first.or(found);
            at += 1;
        }
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_is_found_at_any_depth() {
        let twice = |json: &str| key_given_twice(json.as_bytes());
        assert_eq!(twice(r#"{"id":94,"id":93,"method":"ping"}"#).as_deref(), Some("id"));
        let call = r#"{"id":1,"params":{"name":"status","name":"search","arguments":{}}}"#;
        assert_eq!(twice(call).as_deref(), Some("params.name"));
        let nested = r#"{"params":{"arguments":{"query":"a","k":1,"query":"b"}}}"#;
        assert_eq!(twice(nested).as_deref(), Some("params.arguments.query"));
        assert_eq!(twice(r#"{"a":[{"b":1},{"c":1,"c":2}]}"#).as_deref(), Some("a[1].c"));
        // The same key in two objects, or spelled with an escape that reads
        // as another, is no key given twice; an escape that reads as the same is.
        assert_eq!(twice(r#"{"a":{"k":1},"b":{"k":1},"c":[{"k":1},{"k":2}]}"#), None);
        assert_eq!(twice(r#"{"k":1,"\u006b":2}"#).as_deref(), Some("k"));
        assert_eq!(twice(r#"{"k":1,"K":2}"#), None);
        // The first found is said, and the walk reads the text to its end.
        assert_eq!(twice(r#"{"a":{"x":1,"x":2},"a":3,"b":[1,{"y":[true,null,"s",1.5,-2]}]}"#).as_deref(), Some("a.x"));
        assert_eq!(twice("[1, 2, 3]"), None);
        assert_eq!(twice("not json"), None);
    }
}
