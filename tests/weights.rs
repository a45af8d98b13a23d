//! The weight file: a bit-for-bit round trip, PyTorch names and layouts, a plain PyTorch
//! `state_dict` without our metadata, and every kind of bad file refused with a message that
//! names the tensor and the shapes.
//!
//! `PYTORCH_CHECK_DIR=dir cargo test --test weights` also writes `dir/weights.safetensors` and
//! `dir/expected.json` for `tests/python/check_pytorch_load.py`.
// Native only: in a browser (`wasm-pack test`) the suite is tests/browser/main.rs.
#![cfg(not(target_family = "wasm"))]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use burn::tensor::{Device, Tensor, TensorData};
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use vit_web::inference::images_tensor;
use vit_web::model::{Preset, VisionTransformer, VitConfig};
use vit_web::model::parity::{deterministic_images, deterministic_weights, hash_unit};
use vit_web::weights::{
    FORMAT, WeightFileInfo, expected_tensors, from_safetensors, inspect_safetensors, to_safetensors,
    to_safetensors_async,
};

fn tiny_model(device: &Device) -> VisionTransformer {
    deterministic_weights(VitConfig::tiny().init(device))
}

fn trained_info() -> WeightFileInfo {
    WeightFileInfo {
        recipe_json: r#"{"learning_rate":0.001,"batch_size":256}"#.into(),
        epoch: 3,
        metrics_json: r#"[{"epoch":1,"test_accuracy":0.41}]"#.into(),
        data_json: r#"{"sha256":"a4e2","train":"First(20000)"}"#.into(),
        ..WeightFileInfo::new(VitConfig::tiny(), Some(Preset::Tiny))
    }
}

fn tiny_file() -> Vec<u8> {
    to_safetensors(&tiny_model(&Device::flex()), &trained_info()).expect("a tiny model saves")
}

fn logits(model: &VisionTransformer, device: &Device) -> Vec<f32> {
    let config = VitConfig::tiny();
    let images = images_tensor(deterministic_images(2), 2, &config, device);
    model.forward(images).into_data().try_to_vec::<f32>().expect("logits are f32")
}

/// Polls a future to completion; `into_data_async` on the CPU backend is ready at once.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        std::thread::yield_now();
    }
}

/// A file's metadata entries.
fn metadata_of(bytes: &[u8]) -> Vec<(String, String)> {
    let (_, header) = SafeTensors::read_metadata(bytes).expect("the file parses");
    let entries = header.metadata().clone().unwrap_or_default();
    entries.into_iter().collect()
}

/// Writes a file with the safetensors crate (as `safetensors.torch.save_file` would): `edit`
/// may change a tensor's shape and bytes, or drop it by returning false.
fn rewrite(
    bytes: &[u8],
    metadata: Option<Vec<(String, String)>>,
    mut edit: impl FnMut(&str, &mut Vec<usize>, &mut Vec<u8>) -> bool,
) -> Vec<u8> {
    let file = SafeTensors::deserialize(bytes).expect("the file parses");
    let tensors: Vec<(String, Vec<usize>, Vec<u8>)> = file
        .tensors()
        .into_iter()
        .filter_map(|(name, view)| {
            let (mut shape, mut data) = (view.shape().to_vec(), view.data().to_vec());
            edit(&name, &mut shape, &mut data).then_some((name, shape, data))
        })
        .collect();
    write_tensors(&tensors, metadata)
}

fn write_tensors(tensors: &[(String, Vec<usize>, Vec<u8>)], metadata: Option<Vec<(String, String)>>) -> Vec<u8> {
    let views = tensors.iter().map(|(name, shape, data)| {
        (name.clone(), TensorView::new(Dtype::F32, shape.clone(), data).expect("shape and bytes agree"))
    });
    safetensors::serialize(views, metadata.map(|entries| entries.into_iter().collect())).expect("serializes")
}

fn with_entry(mut metadata: Vec<(String, String)>, key: &str, value: &str) -> Vec<(String, String)> {
    metadata.retain(|(existing, _)| existing != key);
    metadata.push((key.into(), value.into()));
    metadata
}

fn refusal(bytes: &[u8]) -> String {
    match from_safetensors(bytes, &Device::flex()) {
        Ok(_) => panic!("a bad weight file was accepted"),
        Err(error) => error.to_string(),
    }
}

fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{message:?} should mention {part:?}");
    }
}

fn f32_bytes(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_le_bytes).collect()
}

#[test]
fn a_weight_file_round_trips_bit_for_bit() {
    let device = Device::flex();
    let model = tiny_model(&device);
    let bytes = to_safetensors(&model, &trained_info()).expect("a tiny model saves");

    let (loaded, info) = from_safetensors(&bytes, &device).expect("our own file loads");
    assert_eq!(info, trained_info());
    assert!(to_safetensors(&loaded, &info).expect("the loaded model saves") == bytes, "save → load → save changed bytes");
    assert_eq!(logits(&loaded, &device), logits(&model, &device));
    assert_eq!(inspect_safetensors(&bytes).expect("inspects"), trained_info());
}

#[test]
fn the_async_save_writes_the_same_bytes() {
    let model = tiny_model(&Device::flex());
    let bytes = block_on(to_safetensors_async(&model, &trained_info())).expect("saves");
    assert!(bytes == to_safetensors(&model, &trained_info()).expect("saves"));
}

#[test]
fn tensors_carry_pytorch_names_layouts_and_metadata() {
    let model = tiny_model(&Device::flex());
    let bytes = to_safetensors(&model, &trained_info()).expect("saves");
    let file = SafeTensors::deserialize(&bytes).expect("the safetensors crate reads our file");

    let mut names: Vec<&str> = file.names();
    names.sort();
    let expected = expected_tensors(&VitConfig::tiny());
    let mut expected_names: Vec<&str> = expected.iter().map(|spec| spec.name.as_str()).collect();
    expected_names.sort();
    assert_eq!(names, expected_names);
    for spec in &expected {
        let view = file.tensor(&spec.name).expect("listed");
        assert_eq!((view.dtype(), view.shape()), (Dtype::F32, spec.shape.as_slice()), "{}", spec.name);
    }
    assert_eq!(file.tensor("blocks.0.attn.qkv.weight").unwrap().shape(), [384, 128]);
    assert_eq!(file.tensor("pe.weight").unwrap().shape(), [128, 3, 4, 4]);
    assert_eq!(file.tensor("pos").unwrap().shape(), [1, 65, 128]);

    let metadata = metadata_of(&bytes);
    let entry = |key: &str| metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    assert_eq!(entry("format"), Some("pt"));
    assert_eq!(entry("weights_format"), Some(FORMAT));
    assert_eq!(entry("preset"), Some("tiny"));
    assert_eq!(entry("epoch"), Some("3"));
    let config: VitConfig = serde_json::from_str(entry("config").expect("config")).expect("config is JSON");
    assert_eq!(config, VitConfig::tiny());
    let class_names: Vec<String> = serde_json::from_str(entry("class_names").expect("names")).expect("a JSON list");
    assert_eq!(class_names[9], "truck");

    let parameters = VitConfig::tiny().parameter_count();
    println!("tiny weight file: {} bytes ({parameters} parameters)", bytes.len());
    assert!(bytes.len() - 4 * parameters < 16 * 1024, "header of {} bytes", bytes.len() - 4 * parameters);
}

fn values<const D: usize>(tensor: Tensor<D>) -> Vec<f32> {
    tensor.into_data().try_to_vec::<f32>().expect("f32 weights")
}

/// Every tensor of the file holds the burn field the reference's name stands for (written out
/// again here, so a swapped pair in the library's table cannot hide behind a symmetric round trip).
#[test]
fn every_tensor_holds_its_burn_field() {
    let model = tiny_model(&Device::flex());
    let bytes = to_safetensors(&model, &trained_info()).expect("saves");
    let file = SafeTensors::deserialize(&bytes).expect("parses");
    let bias = |param: &Option<burn::module::Param<Tensor<1>>>| values(param.as_ref().expect("a bias").val());
    let projection = &model.patch_embedding.projection;
    let mut fields = vec![
        ("cls".to_string(), values(model.class_token.val())),
        ("pos".into(), values(model.position_embedding.val())),
        ("pe.weight".into(), values(projection.weight.val())),
        ("pe.bias".into(), bias(&projection.bias)),
        ("norm.weight".into(), values(model.norm.gamma.val())),
        ("norm.bias".into(), bias(&model.norm.beta)),
        ("head.weight".into(), values(model.head.weight.val().transpose())),
        ("head.bias".into(), bias(&model.head.bias)),
    ];
    for (i, block) in model.blocks.iter().enumerate() {
        let linears = [("attn.qkv", &block.attention.qkv), ("attn.proj", &block.attention.projection), ("mlp.0", &block.mlp_in), ("mlp.2", &block.mlp_out)];
        for (name, linear) in linears {
            fields.push((format!("blocks.{i}.{name}.weight"), values(linear.weight.val().transpose())));
            fields.push((format!("blocks.{i}.{name}.bias"), bias(&linear.bias)));
        }
        for (name, norm) in [("n1", &block.attention_norm), ("n2", &block.mlp_norm)] {
            fields.push((format!("blocks.{i}.{name}.weight"), values(norm.gamma.val())));
            fields.push((format!("blocks.{i}.{name}.bias"), bias(&norm.beta)));
        }
    }
    assert_eq!(fields.len(), file.len());
    for (name, field) in fields {
        assert_eq!(file.tensor(&name).expect("present").data(), f32_bytes(field), "{name}");
    }
}

#[test]
fn saving_a_model_under_another_config_is_refused() {
    let model = tiny_model(&Device::flex());
    let info = WeightFileInfo::new(VitConfig::small(), Some(Preset::Small));
    let message = to_safetensors(&model, &info).expect_err("a tiny model saved as small").to_string();
    assert_mentions(&message, &["does not match", "small model"]);
}

#[test]
fn a_truncated_file_is_refused() {
    let bytes = tiny_file();
    assert_mentions(&refusal(&bytes[..bytes.len() - 100]), &["truncated"]);
    assert_mentions(&refusal(&bytes[..100]), &["truncated"]);
    assert_mentions(&refusal(&bytes[..5]), &["5 bytes"]);
}

#[test]
fn random_bytes_are_refused() {
    let noise: Vec<u8> = (0..4096).map(|i| (hash_unit(i, 99) * 128.0 + 128.0) as u8).collect();
    assert_mentions(&refusal(&noise), &["not a readable safetensors file"]);
    // A plausible header length followed by noise.
    let mut plausible = noise.clone();
    plausible[..8].copy_from_slice(&64u64.to_le_bytes());
    assert_mentions(&refusal(&plausible), &["not a readable safetensors file", "header"]);
}

#[test]
fn an_absurd_header_length_is_refused() {
    let mut bytes = tiny_file();
    bytes[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    assert_mentions(&refusal(&bytes), &["header length", "18446744073709551615"]);
}

#[test]
fn a_wrong_shape_is_refused_naming_tensor_and_shapes() {
    let bad = rewrite(&tiny_file(), Some(metadata_of(&tiny_file())), |name, shape, data| {
        if name == "blocks.2.attn.qkv.weight" {
            *shape = vec![384, 64];
            data.truncate(384 * 64 * 4);
        }
        true
    });
    assert_mentions(&refusal(&bad), &["blocks.2.attn.qkv.weight has shape [384, 64]", "D=128", "needs [384, 128]"]);
}

#[test]
fn a_missing_tensor_is_refused() {
    let bad = rewrite(&tiny_file(), Some(metadata_of(&tiny_file())), |name, _, _| name != "head.weight");
    assert_eq!(refusal(&bad), "missing tensor head.weight");
}

#[test]
fn an_unexpected_tensor_is_refused() {
    let bad = rewrite(&tiny_file(), Some(metadata_of(&tiny_file())), |_, _, _| true);
    let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> = SafeTensors::deserialize(&bad)
        .unwrap()
        .tensors()
        .into_iter()
        .map(|(name, view)| (name, view.shape().to_vec(), view.data().to_vec()))
        .collect();
    tensors.push(("blocks.0.attn.extra.weight".into(), vec![2], f32_bytes([1.0, 2.0])));
    let bad = write_tensors(&tensors, Some(metadata_of(&bad)));
    assert_mentions(&refusal(&bad), &["unexpected tensor blocks.0.attn.extra.weight", "tiny model"]);
}

#[test]
fn nan_and_infinite_values_are_refused() {
    let poison = |value: f32| {
        rewrite(&tiny_file(), Some(metadata_of(&tiny_file())), move |name, _, data| {
            if name == "blocks.1.mlp.0.bias" {
                data[12..16].copy_from_slice(&value.to_le_bytes());
            }
            true
        })
    };
    assert_eq!(refusal(&poison(f32::NAN)), "blocks.1.mlp.0.bias contains NaN");
    assert_eq!(refusal(&poison(f32::NEG_INFINITY)), "blocks.1.mlp.0.bias contains an infinite value");
}

#[test]
fn metadata_claiming_another_architecture_is_refused() {
    let small = serde_json::to_string(&VitConfig::small()).unwrap();
    let metadata = with_entry(with_entry(metadata_of(&tiny_file()), "config", &small), "preset", "small");
    let bad = rewrite(&tiny_file(), Some(metadata), |_, _, _| true);
    assert_mentions(
        &refusal(&bad),
        &["this file describes a small model (D=256, 6 layers, MLP 512", "tensors are those of a tiny model (D=128, 4 layers, MLP 256"],
    );
}

#[test]
fn bad_metadata_is_refused() {
    let rewritten = |key: &str, value: &str| rewrite(&tiny_file(), Some(with_entry(metadata_of(&tiny_file()), key, value)), |_, _, _| true);
    assert_mentions(&refusal(&rewritten("weights_format", "vit-web/2")), &["'vit-web/2'", FORMAT]);
    let three_heads = serde_json::to_string(&VitConfig { heads: 3, ..VitConfig::tiny() }).unwrap();
    assert_mentions(&refusal(&rewritten("config", &three_heads)), &["heads 3 does not divide embed_dim 128"]);
    assert_mentions(&refusal(&rewritten("config", "{\"embed_dim\": ")), &["config is not a ViT config"]);
    assert_mentions(&refusal(&rewritten("class_names", "[\"cat\", \"dog\"]")), &["names 2 classes", "10 outputs"]);
}

/// The reference's `state_dict` names and shapes, written out from torch_vit_reference.py.
fn reference_state_dict(patch: usize, dim: usize, layers: usize, mlp: usize, classes: usize) -> Vec<(String, Vec<usize>)> {
    let tokens = (32 / patch) * (32 / patch) + 1;
    let mut entries: Vec<(String, Vec<usize>)> = vec![
        ("cls".into(), vec![1, 1, dim]),
        ("pos".into(), vec![1, tokens, dim]),
        ("pe.weight".into(), vec![dim, 3, patch, patch]),
        ("pe.bias".into(), vec![dim]),
    ];
    for i in 0..layers {
        for (part, shape) in [
            ("n1.weight", vec![dim]),
            ("n1.bias", vec![dim]),
            ("attn.qkv.weight", vec![3 * dim, dim]),
            ("attn.qkv.bias", vec![3 * dim]),
            ("attn.proj.weight", vec![dim, dim]),
            ("attn.proj.bias", vec![dim]),
            ("n2.weight", vec![dim]),
            ("n2.bias", vec![dim]),
            ("mlp.0.weight", vec![mlp, dim]),
            ("mlp.0.bias", vec![mlp]),
            ("mlp.2.weight", vec![dim, mlp]),
            ("mlp.2.bias", vec![dim]),
        ] {
            entries.push((format!("blocks.{i}.{part}"), shape));
        }
    }
    entries.push(("norm.weight".into(), vec![dim]));
    entries.push(("norm.bias".into(), vec![dim]));
    entries.push(("head.weight".into(), vec![classes, dim]));
    entries.push(("head.bias".into(), vec![classes]));
    entries
}

#[test]
fn a_pytorch_state_dict_without_our_metadata_loads() {
    // As `safetensors.torch.save_file(ViT(p=8, d=64, L=2, h=2, mlp=96, nc=5).state_dict(), path)`
    // writes it: only {"format": "pt"} as metadata.
    let tensors: Vec<(String, Vec<usize>, Vec<u8>)> = reference_state_dict(8, 64, 2, 96, 5)
        .into_iter()
        .enumerate()
        .map(|(stream, (name, shape))| {
            let count = shape.iter().product::<usize>() as u64;
            let data = f32_bytes((0..count).map(|i| 0.1 * hash_unit(i, stream as u64)));
            (name, shape, data)
        })
        .collect();
    let bytes = write_tensors(&tensors, Some(vec![("format".into(), "pt".into())]));

    let device = Device::flex();
    let (model, info) = from_safetensors(&bytes, &device).expect("a reference state_dict loads");
    // Heads are in no shape: D/32 = 2.
    assert_eq!(info, WeightFileInfo::new(VitConfig::new(32, 3, 8, 64, 2, 2, 96, 5), None));
    assert_eq!(info.class_names[4], "class 4");
    assert_eq!(model.forward(Tensor::zeros([1, 3, 32, 32], &device)).dims(), [1, 5]);

    // Saved again, every tensor comes back byte for byte under its name.
    let saved = to_safetensors(&model, &info).expect("saves");
    let file = SafeTensors::deserialize(&saved).unwrap();
    for (name, shape, data) in &tensors {
        let view = file.tensor(name).unwrap_or_else(|_| panic!("{name} written back"));
        assert_eq!((view.shape(), view.data()), (shape.as_slice(), data.as_slice()), "{name}");
    }
    // And the transposition is real: burn's [in, out] is PyTorch's [out, in] turned over.
    let burn_head = model.head.weight.val().into_data(); // [64, 5]
    let pytorch_head = TensorData::from_bytes_vec(tensors.iter().find(|t| t.0 == "head.weight").unwrap().2.clone(), [5, 64], burn::tensor::DType::F32);
    let (burn_head, pytorch_head) = (burn_head.try_to_vec::<f32>().unwrap(), pytorch_head.try_to_vec::<f32>().unwrap());
    assert_eq!(burn_head[10 * 5 + 3], pytorch_head[3 * 64 + 10]);
}

#[test]
fn our_tiny_file_without_metadata_loads_as_the_tiny_preset() {
    let device = Device::flex();
    let model = tiny_model(&device);
    let ours = to_safetensors(&model, &trained_info()).expect("saves");
    let plain = rewrite(&ours, None, |_, _, _| true);
    let (loaded, info) = from_safetensors(&plain, &device).expect("loads");
    assert_eq!(info, WeightFileInfo::new(VitConfig::tiny(), Some(Preset::Tiny)));
    assert_eq!(logits(&loaded, &device), logits(&model, &device));
}

/// Writes the files `tests/python/check_pytorch_load.py` reads, when `PYTORCH_CHECK_DIR` is set.
#[test]
fn writes_the_pytorch_cross_check_when_asked() {
    let Some(dir) = std::env::var_os("PYTORCH_CHECK_DIR").map(std::path::PathBuf::from) else { return };
    let device = Device::flex();
    let model = tiny_model(&device);
    std::fs::create_dir_all(&dir).expect("PYTORCH_CHECK_DIR can be created");
    std::fs::write(dir.join("weights.safetensors"), tiny_file()).expect("weights written");
    let expected = serde_json::json!({
        "input_shape": [2, 3, 32, 32],
        "input": deterministic_images(2),
        "logits_shape": [2, 10],
        "logits": logits(&model, &device),
    });
    std::fs::write(dir.join("expected.json"), expected.to_string()).expect("expected.json written");
    println!("wrote {}", dir.display());
}

/// The other direction of `tests/python/check_pytorch_load.py`: a reference model saved by
/// PyTorch with the docs' snippet loads here and gives PyTorch's logits. Runs only when asked
/// (scripts/test.sh does, after the Python check wrote the files).
#[test]
fn loads_the_pytorch_state_dict_when_asked() {
    let Some(dir) = std::env::var_os("PYTORCH_CHECK_DIR").map(std::path::PathBuf::from) else { return };
    let bytes = std::fs::read(dir.join("reference.safetensors")).expect("tests/python/check_pytorch_load.py wrote reference.safetensors");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("reference_expected.json")).expect("expected logits written"))
            .expect("valid JSON");
    let device = Device::flex();
    let (model, info) = from_safetensors(&bytes, &device).expect("a PyTorch state_dict loads");
    assert_eq!(info.preset, Some(Preset::Tiny), "the config is read off the shapes");
    assert_eq!(info.epoch, 0, "a plain state_dict has no training metadata");
    let input: Vec<f32> = serde_json::from_value(expected["input"].clone()).unwrap();
    let want: Vec<f32> = serde_json::from_value(expected["logits"].clone()).unwrap();
    let images = images_tensor(input, 2, &info.config, &device);
    let got = model.forward(images).into_data().try_to_vec::<f32>().unwrap();
    for (got, want) in got.iter().zip(&want) {
        assert!((got - want).abs() <= 1e-4 * want.abs().max(1.0), "ours {got}, PyTorch {want}");
    }
}

/// Writes weight files the page's end-to-end tests upload (scripts/e2e.sh asks for them):
/// a freshly initialised small-preset model, to switch the page's preset.
#[test]
fn writes_e2e_fixtures_when_asked() {
    let Some(dir) = std::env::var_os("E2E_FIXTURES_DIR").map(std::path::PathBuf::from) else { return };
    std::fs::create_dir_all(&dir).expect("E2E_FIXTURES_DIR can be created");
    let device = Device::flex();
    device.seed(3);
    let model = VitConfig::small().init(&device);
    let bytes = to_safetensors(&model, &WeightFileInfo::new(VitConfig::small(), Some(Preset::Small))).expect("a small model writes");
    std::fs::write(dir.join("vit-small-fresh.safetensors"), bytes).expect("fixture written");
}
