//! The schema of every message, as protoc encodes it (its
//! `google.protobuf.FileDescriptorSet`): what the wire walk follows
//! (`wire::Schema`), and what holds the versioned contract to `azdext`.

/// The schema of every message of [`crate::azdext`] (and of the well-known types they use),
/// as protoc's encoded `google.protobuf.FileDescriptorSet`.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/messages/azdext.fds"));

/// The schema of `azd/extensions/v1/*.proto` (the versioned contract), as protoc encodes it: what
/// the tests hold [`FILE_DESCRIPTOR_SET`] to (the same messages, fields and methods).
#[cfg(test)]
const FILE_DESCRIPTOR_SET_V1: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/messages/v1.fds"));

#[cfg(test)]
mod tests {
    use prost::Message as _;
    use prost_types::{
        DescriptorProto, EnumDescriptorProto, FileDescriptorSet, ServiceDescriptorProto,
    };

    /// What a file declares: its messages, enums and services.
    type Declared = (
        Vec<DescriptorProto>,
        Vec<EnumDescriptorProto>,
        Vec<ServiceDescriptorProto>,
    );

    /// The files of `package` in `set`, by file name, with every type reference
    /// written as if in package `azdext`.
    fn files_of(set: &[u8], package: &str) -> Vec<(String, Declared)> {
        let set = FileDescriptorSet::decode(set).expect("protoc's descriptor set");
        let from = format!(".{package}.");
        let mut files: Vec<_> = set
            .file
            .into_iter()
            .filter(|f| f.package() == package)
            .map(|f| {
                let name = f.name().rsplit('/').next().unwrap_or_default().to_owned();
                let mut messages = f.message_type.clone();
                for m in &mut messages {
                    rename(m, &from);
                }
                let mut services = f.service.clone();
                for s in &mut services {
                    for method in &mut s.method {
                        for t in [&mut method.input_type, &mut method.output_type] {
                            if let Some(t) = t.as_mut() {
                                *t = t.replace(&from, ".azdext.");
                            }
                        }
                    }
                }
                (name, (messages, f.enum_type.clone(), services))
            })
            .collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        files
    }

    fn rename(message: &mut DescriptorProto, from: &str) {
        for field in &mut message.field {
            if let Some(t) = field.type_name.as_mut() {
                *t = t.replace(from, ".azdext.");
            }
        }
        for nested in &mut message.nested_type {
            rename(nested, from);
        }
    }

    #[test]
    fn the_versioned_contract_has_the_bodies_of_azdext() {
        let legacy = files_of(super::FILE_DESCRIPTOR_SET, "azdext");
        let v1 = files_of(super::FILE_DESCRIPTOR_SET_V1, "azd.extensions.v1");
        let names =
            |files: &[(String, Declared)]| files.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&legacy), names(&v1));
        assert_eq!(legacy.len(), 6);
        for ((name, declared), (_, v1_declared)) in legacy.iter().zip(&v1) {
            assert_eq!(declared, v1_declared, "what {name} declares");
        }
        // And the comparison can tell: a field renumbered would be seen.
        let mut changed = v1[5].1.clone();
        changed.0[0].field[0].number = Some(42);
        assert_ne!(legacy[5].1, changed);
    }
}
