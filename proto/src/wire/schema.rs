//! Which fields of which messages are messages themselves: the part of the
//! schema that decides where prost will descend, read once from the
//! descriptors protoc wrote when the wire types were generated
//! ([`crate::FILE_DESCRIPTOR_SET`]). A field the schema does
//! not list is opaque: prost skips its bytes without reading into them.

use std::collections::HashMap;
use std::sync::LazyLock;

use prost::Message as _;
use prost_types::field_descriptor_proto::Type;

/// One message type: its message-typed fields, by number, to the index of
/// their type.
#[derive(Debug, Default)]
pub(super) struct MessageShape {
    children: HashMap<u32, usize>,
}

/// The message types of azd's protocol.
#[derive(Debug)]
pub struct Schema {
    messages: Vec<MessageShape>,
    /// Every message type's index, by full name without the leading dot
    /// (`azdext.ProvisioningMessage`, as `prost::Name::full_name` gives it).
    names: HashMap<String, usize>,
    /// `azdext.ProvisioningMessage`, the envelope.
    pub envelope: usize,
    /// `google.protobuf.Struct` and `google.protobuf.ListValue`: one level of
    /// a config object or list each.
    config_levels: [usize; 2],
}

impl Schema {
    /// The schema of this build's wire types.
    pub fn get() -> &'static Schema {
        static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
            Schema::from_descriptors(crate::descriptors::FILE_DESCRIPTOR_SET)
                // The bytes are protoc's, embedded at build time; a test reads them.
                .expect("the embedded descriptor set describes the envelope")
        });
        &SCHEMA
    }

    /// Reads an encoded `FileDescriptorSet`.
    pub fn from_descriptors(bytes: &[u8]) -> Result<Schema, String> {
        let set = prost_types::FileDescriptorSet::decode(bytes).map_err(|e| e.to_string())?;
        let mut names = HashMap::new();
        let mut types = Vec::new();
        for file in &set.file {
            let package = file.package.as_deref().unwrap_or("");
            let prefix = if package.is_empty() {
                String::new()
            } else {
                format!(".{package}")
            };
            for message in &file.message_type {
                collect(&prefix, message, &mut names, &mut types);
            }
        }
        // Descriptors name types with a leading dot (`.azdext.KeyValue`).
        let index = |name: &str| {
            names
                .get(name.strip_prefix('.').unwrap_or(name))
                .copied()
                .ok_or_else(|| format!("the descriptors do not describe {name}"))
        };
        let mut messages: Vec<MessageShape> = Vec::with_capacity(types.len());
        for descriptor in &types {
            let mut shape = MessageShape::default();
            for field in &descriptor.field {
                if field.r#type() == Type::Message {
                    let number = u32::try_from(field.number()).map_err(|e| e.to_string())?;
                    shape.children.insert(number, index(field.type_name())?);
                }
            }
            messages.push(shape);
        }
        let envelope = index(".azdext.ProvisioningMessage")?;
        let config_levels = [
            index(".google.protobuf.Struct")?,
            index(".google.protobuf.ListValue")?,
        ];
        Ok(Schema {
            messages,
            names,
            envelope,
            config_levels,
        })
    }

    /// The message type named `full_name` (`azdext.KeyValueListResponse`).
    pub fn message(&self, full_name: &str) -> Option<usize> {
        self.names.get(full_name).copied()
    }

    /// The type of field `field` of message `message`, if it is a message.
    pub fn child(&self, message: usize, field: u32) -> Option<usize> {
        self.messages.get(message)?.children.get(&field).copied()
    }

    /// Whether a message of type `message` is one level of a config.
    pub fn is_config_level(&self, message: usize) -> bool {
        self.config_levels.contains(&message)
    }
}

/// Numbers `message` and its nested types, by full name.
fn collect<'a>(
    prefix: &str,
    message: &'a prost_types::DescriptorProto,
    names: &mut HashMap<String, usize>,
    types: &mut Vec<&'a prost_types::DescriptorProto>,
) {
    let name = format!("{prefix}.{}", message.name());
    let dotless = name.strip_prefix('.').unwrap_or(&name);
    names.insert(dotless.to_owned(), types.len());
    types.push(message);
    for nested in &message.nested_type {
        collect(&name, nested, names, types);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_schema_knows_the_envelope_and_the_config_path() {
        let schema = Schema::get();
        let initialize = schema
            .child(schema.envelope, 4)
            .expect("initialize_request");
        let options = schema.child(initialize, 2).expect("options");
        let config = schema.child(options, 6).expect("config");
        assert!(schema.is_config_level(config));
        let entry = schema.child(config, 1).expect("Struct.fields entry");
        let value = schema.child(entry, 2).expect("entry value");
        let list = schema.child(value, 6).expect("Value.list_value");
        assert!(schema.is_config_level(list));
        assert_eq!(schema.child(list, 1), Some(value));
        // Found by the name prost gives a type.
        assert_eq!(
            schema.message("azdext.ProvisioningMessage"),
            Some(schema.envelope)
        );
        assert_eq!(schema.message("google.protobuf.Struct"), Some(config));
        assert_eq!(schema.message("azdext.NoSuchMessage"), None);
        // A string field is opaque; so is a field the schema does not have.
        assert_eq!(schema.child(schema.envelope, 1), None);
        assert_eq!(schema.child(schema.envelope, 1000), None);
        // Every request kind's field is a message the walk enters.
        for kind in crate::RequestKind::ALL {
            assert!(
                schema
                    .child(schema.envelope, kind.envelope_field())
                    .is_some(),
                "{kind}"
            );
        }
    }

    #[test]
    fn descriptors_that_miss_the_envelope_are_refused() {
        assert!(Schema::from_descriptors(&[]).is_err());
        assert!(Schema::from_descriptors(&[0xff, 0xff]).is_err());
    }
}
