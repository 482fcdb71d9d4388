//! The history's own owner ids in what `check` prints. A real runtime's owner ids are
//! opaque strings (R14); the checkers judge numbers ([`super::decode::STRING_OWNER_BASE`]
//! and up, in order of appearance), and their messages and the story print an owner as
//! `OwnerId`'s display form (`p<process>#lane-<n>`) or as the bare number. Both are put
//! back into the history's own string here, so that a verdict names the owner as the
//! runtime's operators know it — never as a number the reader never wrote.

use std::collections::BTreeMap;

/// How many bits of an owner id hold the lane in `OwnerId`'s display form.
const LANE_BITS: u32 = 16;

/// `text` with every owner id in `names` (number → the history's string) written as its
/// string: the display form `p<id >> 16>` / `p<id >> 16>#lane-<(id & 0xffff) - 1>` and the
/// bare decimal number, each as a whole word.
pub fn speak(text: &str, names: &BTreeMap<u64, String>) -> String {
    if names.is_empty() {
        return text.to_string();
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if starts_word {
            if let Some((id, end)) = owner_at(bytes, i) {
                if let Some(name) = names.get(&id) {
                    out.push_str(name);
                    i = end;
                    continue;
                }
            }
        }
        let ch = text[i..].chars().next().expect("in bounds");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// The owner id written at `i` (display form or bare number, ending a word) and where it
/// ends.
fn owner_at(bytes: &[u8], i: usize) -> Option<(u64, usize)> {
    let (id, end) = if bytes[i] == b'p' {
        let (process, mut end) = number_at(bytes, i + 1)?;
        let mut lane_part = 0u64;
        const LANE: &[u8] = b"#lane-";
        if bytes[end..].starts_with(LANE) {
            if let Some((lane, lane_end)) = number_at(bytes, end + LANE.len()) {
                lane_part = lane.checked_add(1)?;
                end = lane_end;
            }
        }
        (process.checked_shl(LANE_BITS)? | lane_part, end)
    } else {
        number_at(bytes, i)?
    };
    let ends_word = end == bytes.len() || !bytes[end].is_ascii_alphanumeric();
    ends_word.then_some((id, end))
}

/// The decimal number at `i`, if there is one, and where it ends.
fn number_at(bytes: &[u8], i: usize) -> Option<(u64, usize)> {
    let digits = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let text = std::str::from_utf8(&bytes[i..i + digits]).ok()?;
    Some((text.parse().ok()?, i + digits))
}

#[cfg(test)]
mod tests {
    use super::super::decode::STRING_OWNER_BASE;
    use super::*;

    fn names() -> BTreeMap<u64, String> {
        BTreeMap::from([(STRING_OWNER_BASE, "p3-lane1".to_string()), (STRING_OWNER_BASE + 5, "node-a/lane 2".into())])
    }

    #[test]
    fn both_printed_forms_of_a_string_owner_become_its_name() {
        let display = |id: u64| sutra_sim_model::ids::OwnerId(id).to_string();
        let text = format!(
            "commit by {} under epoch 2, but epoch 3 ({}) is current; owner {} and {}",
            display(STRING_OWNER_BASE),
            display(STRING_OWNER_BASE + 5),
            STRING_OWNER_BASE,
            STRING_OWNER_BASE + 5
        );
        assert_eq!(
            speak(&text, &names()),
            "commit by p3-lane1 under epoch 2, but epoch 3 (node-a/lane 2) is current; owner p3-lane1 and node-a/lane 2"
        );
    }

    #[test]
    fn other_numbers_and_the_simulation_s_own_owners_are_left_alone() {
        let text = "instance 34 by p1#lane-0 at seq 1152921504606846977 (v12)";
        assert_eq!(speak(text, &names()), text);
        assert_eq!(speak("p17592186044416#lane-9x", &names()), "p17592186044416#lane-9x");
    }
}
