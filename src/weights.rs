//! The weight file: the whole model as one safetensors file whose tensor names and layouts are
//! those of the PyTorch reference's `state_dict`, so the reference loads our file with
//! `load_state_dict(strict=True)` and we load a reference `state_dict` saved with
//! `safetensors.torch.save_file` (see `docs/weights.md`).
//!
//! # Why the `safetensors` crate, and our own header writer
//! burn-store (burn's own safetensors support) reads tensors back through synchronous
//! `into_data`, which WebGPU in the browser cannot do, and reaches PyTorch names through
//! adapters and key remappers whose output we would have to check against PyTorch anyway. Here
//! the name table below is the only mapping, and the single readback is `into_data_async`.
//! Reading uses the `safetensors` crate's parser, which checks the header's bounds, offsets and
//! sizes. Writing lays out the header itself, because `safetensors::serialize` writes
//! `__metadata__` in `HashMap` order, which differs from run to run, and a weight file must
//! round-trip bit for bit. (The format is just an 8-byte little-endian header length, a JSON
//! header padded with spaces to a multiple of 8, then the tensors' little-endian bytes.)
//!
//! # Name table
//! Every parameter, in `state_dict` order. D: embed_dim, C: channels, P: patch_size, N: patches,
//! M: mlp_dim, K: classes. Linear weights are `[out, in]` in PyTorch and `[in, out]` in burn, so
//! they are transposed on the way in and out; everything else is stored as it is.
//!
//! | PyTorch name                   | PyTorch shape  | burn field                                   |
//! |--------------------------------|----------------|----------------------------------------------|
//! | `cls`                          | `[1, 1, D]`    | `class_token`                                |
//! | `pos`                          | `[1, N+1, D]`  | `position_embedding`                         |
//! | `pe.weight`, `pe.bias`         | `[D, C, P, P]`, `[D]` | `patch_embedding.projection` (Conv2d)  |
//! | `blocks.{i}.n1.weight`, `.bias`| `[D]`          | `blocks[i].attention_norm.gamma`, `.beta`    |
//! | `blocks.{i}.attn.qkv.weight`   | `[3D, D]`      | `blocks[i].attention.qkv.weight` (transposed)|
//! | `blocks.{i}.attn.qkv.bias`     | `[3D]`         | `blocks[i].attention.qkv.bias`               |
//! | `blocks.{i}.attn.proj.weight`  | `[D, D]`       | `blocks[i].attention.projection` (transposed)|
//! | `blocks.{i}.n2.weight`, `.bias`| `[D]`          | `blocks[i].mlp_norm.gamma`, `.beta`          |
//! | `blocks.{i}.mlp.0.weight`      | `[M, D]`       | `blocks[i].mlp_in.weight` (transposed)       |
//! | `blocks.{i}.mlp.2.weight`      | `[D, M]`       | `blocks[i].mlp_out.weight` (transposed)      |
//! | `norm.weight`, `norm.bias`     | `[D]`          | `norm.gamma`, `norm.beta`                    |
//! | `head.weight`, `head.bias`     | `[K, D]`, `[K]`| `head` (weight transposed)                   |
//!
//! Each Linear's bias (`[out]`) sits next to its weight. The QKV output is split the same way on
//! both sides (`[3, heads, head_dim]`), so transposing is all the mapping there is.
//!
//! # Metadata (`__metadata__`, string → string)
//! `format` = `pt` (the `safetensors.torch` convention: PyTorch layouts), `weights_format` =
//! [`FORMAT`], `config` = [`VitConfig`] as JSON, `preset` (only for a preset), `class_names` (JSON
//! array), `recipe` and `metrics` (the caller's JSON, kept opaque), `epoch` (decimal), and where
//! they apply `data` (what it trained on) and `base` (the model it was fine-tuned from), JSON too. A file
//! without `weights_format` is read as a plain PyTorch `state_dict`: see [`from_safetensors`].

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use burn::module::Param;
use burn::nn::{LayerNorm, Linear};
use burn::tensor::{Device, Tensor, TensorData};
use safetensors::tensor::{Dtype, Metadata, SafeTensorError, SafeTensors};

use crate::data::classes::CLASS_NAMES;
use crate::model::{Preset, VisionTransformer, VitConfig};

/// Name and version of our layout, in the metadata's `weights_format`.
pub const FORMAT: &str = "vit-web/1";

/// No config dimension may exceed this: it keeps the shape arithmetic of a hostile file's
/// metadata far from overflowing (on wasm32 `usize` is 32 bits).
const LARGEST_DIMENSION: usize = 1 << 15;

/// Everything in a weight file besides the tensors.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightFileInfo {
    pub config: VitConfig,
    /// The preset the model was built from, if any.
    pub preset: Option<Preset>,
    /// One name per output of the head.
    pub class_names: Vec<String>,
    /// The training recipe as the caller's JSON; empty when the file does not say.
    pub recipe_json: String,
    /// Epochs trained.
    pub epoch: usize,
    /// Metrics history as the caller's JSON; empty when the file does not say.
    pub metrics_json: String,
    /// What it was trained and tested on, as the caller's JSON (the archive's sha256, the
    /// subset); empty when the file does not say.
    pub data_json: String,
    /// The model this one was fine-tuned from, as the caller's JSON (its file's name and
    /// SHA-256, its classes); empty for a model trained from scratch.
    pub base_json: String,
}

impl WeightFileInfo {
    /// Info for an untrained model: CIFAR-10's class names when there are ten classes.
    pub fn new(config: VitConfig, preset: Option<Preset>) -> Self {
        let class_names = default_class_names(config.classes);
        Self {
            config,
            preset,
            class_names,
            recipe_json: String::new(),
            epoch: 0,
            metrics_json: String::new(),
            data_json: String::new(),
            base_json: String::new(),
        }
    }
}

/// Why a weight file could not be written or read. Reading checks everything before a model
/// is built, so a caller keeps its old model until it gets `Ok`.
#[derive(Debug, thiserror::Error)]
pub enum WeightError {
    #[error("not a readable safetensors file: {0}")]
    NotSafetensors(String),
    #[error("this weight file is in format '{found}', but this version reads {FORMAT}")]
    UnsupportedFormat { found: String },
    #[error("the weight file's metadata is unusable: {0}")]
    Metadata(String),
    #[error("this file describes {described} but its tensors are those of {found}")]
    ArchitectureMismatch { described: String, found: String },
    #[error("missing tensor {0}")]
    MissingTensor(String),
    #[error("unexpected tensor {name}: {model} has no such parameter")]
    UnexpectedTensor { name: String, model: String },
    #[error("{name} is stored as {dtype}, but only F32 is supported (call .float() before saving)")]
    WrongDtype { name: String, dtype: String },
    #[error("{name} has shape {found:?} but {model} needs {expected:?}")]
    WrongShape { name: String, found: Vec<usize>, expected: Vec<usize>, model: String },
    #[error("{name} has shape {found:?}, which no ViT has: it should be {needs}")]
    UnrecognisedShape { name: String, found: Vec<usize>, needs: &'static str },
    #[error("{name} contains {problem}")]
    NotFinite { name: String, problem: &'static str },
    #[error("the model does not match the config it is saved with: {0}")]
    ModelMismatch(String),
    #[error("could not read the weights back from the device: {0}")]
    Readback(String),
}

/// Tensors in PyTorch's names and layouts, with their values.
type NamedValues = Vec<(TensorSpec, Vec<f32>)>;

/// One tensor of the file: its PyTorch name and shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorSpec {
    pub name: String,
    pub shape: Vec<usize>,
}

/// The tensors a model of `config` has, in `state_dict` order (the name table above).
pub fn expected_tensors(config: &VitConfig) -> Vec<TensorSpec> {
    let (d, m) = (config.embed_dim, config.mlp_dim);
    let mut specs = vec![
        spec("cls".into(), &[1, 1, d]),
        spec("pos".into(), &[1, config.tokens(), d]),
        spec("pe.weight".into(), &[d, config.channels, config.patch_size, config.patch_size]),
        spec("pe.bias".into(), &[d]),
    ];
    for i in 0..config.depth {
        layer_norm_specs(&mut specs, &format!("blocks.{i}.n1"), d);
        linear_specs(&mut specs, &format!("blocks.{i}.attn.qkv"), d, 3 * d);
        linear_specs(&mut specs, &format!("blocks.{i}.attn.proj"), d, d);
        layer_norm_specs(&mut specs, &format!("blocks.{i}.n2"), d);
        linear_specs(&mut specs, &format!("blocks.{i}.mlp.0"), d, m);
        linear_specs(&mut specs, &format!("blocks.{i}.mlp.2"), m, d);
    }
    layer_norm_specs(&mut specs, "norm", d);
    linear_specs(&mut specs, "head", d, config.classes);
    specs
}

fn spec(name: String, shape: &[usize]) -> TensorSpec {
    TensorSpec { name, shape: shape.to_vec() }
}

fn layer_norm_specs(specs: &mut Vec<TensorSpec>, name: &str, dim: usize) {
    specs.push(spec(format!("{name}.weight"), &[dim]));
    specs.push(spec(format!("{name}.bias"), &[dim]));
}

/// PyTorch's Linear: weight `[out, in]`, bias `[out]`.
fn linear_specs(specs: &mut Vec<TensorSpec>, name: &str, input: usize, output: usize) {
    specs.push(spec(format!("{name}.weight"), &[output, input]));
    specs.push(spec(format!("{name}.bias"), &[output]));
}

/// Writes the model, reading its weights back once with `into_data_async` (the only readback
/// WebGPU in the browser allows; natively the future is ready at once).
pub async fn to_safetensors_async(model: &VisionTransformer, info: &WeightFileInfo) -> Result<Vec<u8>, WeightError> {
    check_info(info)?;
    let (slots, flat) = gather(model);
    let data = flat.into_data_async().await.map_err(|error| WeightError::Readback(error.to_string()))?;
    encode(slots, data, info)
}

/// Like [`to_safetensors_async`], reading synchronously: native only, as WebGPU in the browser
/// cannot read synchronously.
#[cfg(not(target_family = "wasm"))]
pub fn to_safetensors(model: &VisionTransformer, info: &WeightFileInfo) -> Result<Vec<u8>, WeightError> {
    check_info(info)?;
    let (slots, flat) = gather(model);
    let data = flat.try_into_data().map_err(|error| WeightError::Readback(error.to_string()))?;
    encode(slots, data, info)
}

/// Reads and checks a weight file and builds the model on `device`.
///
/// A file with our metadata gives its config. A file without (a reference `state_dict` saved
/// with `safetensors.torch.save_file`) has its config read off the tensor shapes: D and P from
/// `pe.weight`, the image size from `pos`, L from the highest `blocks.{i}`, M from
/// `blocks.0.mlp.0.weight`, the classes from `head.weight`. The number of heads is not in any
/// shape; it is taken as D/32 (head width 32, as in both presets: 4 heads for D=128, 8 for
/// D=256), or 1 where 32 does not divide D. Dimensions equal to a preset's give that preset.
pub fn from_safetensors(bytes: &[u8], device: &Device) -> Result<(VisionTransformer, WeightFileInfo), WeightError> {
    let (info, tensors) = read_checked(bytes)?;
    Ok((build_model(&info.config, tensors, device), info))
}

/// Checks a weight file completely, as [`from_safetensors`] does, without building a model.
pub fn inspect_safetensors(bytes: &[u8]) -> Result<WeightFileInfo, WeightError> {
    read_checked(bytes).map(|(info, _)| info)
}

/// The one place that pairs PyTorch names with burn parameters: the name table, in
/// `state_dict` order. Saving and loading both walk it, so they cannot disagree.
fn visit_parameters(model: &mut VisionTransformer, visitor: &mut impl ParameterVisitor) {
    visitor.visit("cls".into(), Layout::AsIs, &mut model.class_token);
    visitor.visit("pos".into(), Layout::AsIs, &mut model.position_embedding);
    let projection = &mut model.patch_embedding.projection;
    visitor.visit("pe.weight".into(), Layout::AsIs, &mut projection.weight);
    if let Some(bias) = &mut projection.bias {
        visitor.visit("pe.bias".into(), Layout::AsIs, bias);
    }
    for (i, block) in model.blocks.iter_mut().enumerate() {
        visit_layer_norm(visitor, format!("blocks.{i}.n1"), &mut block.attention_norm);
        visit_linear(visitor, format!("blocks.{i}.attn.qkv"), &mut block.attention.qkv);
        visit_linear(visitor, format!("blocks.{i}.attn.proj"), &mut block.attention.projection);
        visit_layer_norm(visitor, format!("blocks.{i}.n2"), &mut block.mlp_norm);
        visit_linear(visitor, format!("blocks.{i}.mlp.0"), &mut block.mlp_in);
        visit_linear(visitor, format!("blocks.{i}.mlp.2"), &mut block.mlp_out);
    }
    visit_layer_norm(visitor, "norm".into(), &mut model.norm);
    visit_linear(visitor, "head".into(), &mut model.head);
}

/// burn's LayerNorm calls PyTorch's `weight` and `bias` `gamma` and `beta`.
fn visit_layer_norm(visitor: &mut impl ParameterVisitor, name: String, norm: &mut LayerNorm) {
    visitor.visit(format!("{name}.weight"), Layout::AsIs, &mut norm.gamma);
    if let Some(beta) = &mut norm.beta {
        visitor.visit(format!("{name}.bias"), Layout::AsIs, beta);
    }
}

fn visit_linear(visitor: &mut impl ParameterVisitor, name: String, linear: &mut Linear) {
    visitor.visit(format!("{name}.weight"), Layout::Transposed, &mut linear.weight);
    if let Some(bias) = &mut linear.bias {
        visitor.visit(format!("{name}.bias"), Layout::AsIs, bias);
    }
}

/// How burn stores a tensor relative to PyTorch.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Layout {
    AsIs,
    /// A Linear weight: burn `[in, out]`, PyTorch `[out, in]`.
    Transposed,
}

trait ParameterVisitor {
    fn visit<const D: usize>(&mut self, name: String, layout: Layout, param: &mut Param<Tensor<D>>);
}

/// A parameter on its way out: its name, burn shape and layout.
struct Slot {
    name: String,
    burn_shape: Vec<usize>,
    layout: Layout,
}

/// Every parameter flattened into one tensor, so saving costs one readback, not one per tensor.
fn gather(model: &VisionTransformer) -> (Vec<Slot>, Tensor<1>) {
    #[derive(Default)]
    struct Collector {
        slots: Vec<Slot>,
        flat: Vec<Tensor<1>>,
    }
    impl ParameterVisitor for Collector {
        fn visit<const D: usize>(&mut self, name: String, layout: Layout, param: &mut Param<Tensor<D>>) {
            let tensor = param.val();
            let burn_shape = tensor.dims().to_vec();
            self.flat.push(tensor.reshape([burn_shape.iter().product::<usize>()]));
            self.slots.push(Slot { name, burn_shape, layout });
        }
    }
    let mut collector = Collector::default();
    visit_parameters(&mut model.clone(), &mut collector); // a clone shares the tensors
    (collector.slots, Tensor::cat(collector.flat, 0))
}

/// Turns the read-back values into the file, after checking the model is the one `info` describes.
fn encode(slots: Vec<Slot>, data: TensorData, info: &WeightFileInfo) -> Result<Vec<u8>, WeightError> {
    let values = data.try_into_vec_as::<f32>().map_err(|error| WeightError::Readback(format!("{error:?}")))?;
    let total: usize = slots.iter().map(|slot| slot.burn_shape.iter().product::<usize>()).sum();
    if values.len() != total {
        return Err(WeightError::Readback(format!("got {} values for {total} parameters", values.len())));
    }
    let mut offset = 0;
    let tensors: NamedValues = slots
        .into_iter()
        .map(|Slot { name, burn_shape, layout }| {
            let part = &values[offset..offset + burn_shape.iter().product::<usize>()];
            offset += part.len();
            match layout {
                Layout::AsIs => (TensorSpec { name, shape: burn_shape }, part.to_vec()),
                Layout::Transposed => {
                    let (rows, cols) = (burn_shape[0], burn_shape[1]);
                    (TensorSpec { name, shape: vec![cols, rows] }, transpose(part, rows, cols))
                }
            }
        })
        .collect();

    let expected = expected_tensors(&info.config);
    if tensors.len() != expected.len() {
        let message = format!("the model has {} tensors, {} has {}", tensors.len(), describe(&info.config), expected.len());
        return Err(WeightError::ModelMismatch(message));
    }
    for ((spec, values), want) in tensors.iter().zip(&expected) {
        if spec != want {
            let message = format!("the model has {} {:?} where {} has {} {:?}", spec.name, spec.shape, describe(&info.config), want.name, want.shape);
            return Err(WeightError::ModelMismatch(message));
        }
        check_finite(&spec.name, values)?;
    }
    write_file(&tensors, &metadata(info)?)
}

fn metadata(info: &WeightFileInfo) -> Result<BTreeMap<&'static str, String>, WeightError> {
    let mut entries = BTreeMap::from([
        ("format", "pt".to_string()),
        ("weights_format", FORMAT.to_string()),
        ("config", json(&info.config)?),
        ("class_names", json(&info.class_names)?),
        ("recipe", info.recipe_json.clone()),
        ("epoch", info.epoch.to_string()),
        ("metrics", info.metrics_json.clone()),
    ]);
    if let Some(preset) = info.preset {
        entries.insert("preset", preset.name().to_string());
    }
    if !info.data_json.is_empty() {
        entries.insert("data", info.data_json.clone());
    }
    if !info.base_json.is_empty() {
        entries.insert("base", info.base_json.clone());
    }
    Ok(entries)
}

/// Lays out the file: metadata first, then the tensors in the order given (sorted keys and a
/// fixed order make the bytes a function of the model alone).
fn write_file(tensors: &[(TensorSpec, Vec<f32>)], metadata: &BTreeMap<&str, String>) -> Result<Vec<u8>, WeightError> {
    let mut header = format!("{{\"__metadata__\":{}", json(metadata)?);
    let mut end = 0;
    for (spec, values) in tensors {
        let start = end;
        end += 4 * values.len();
        let (name, shape) = (json(&spec.name)?, json(&spec.shape)?);
        let _ = write!(header, ",{name}:{{\"dtype\":\"F32\",\"shape\":{shape},\"data_offsets\":[{start},{end}]}}");
    }
    header.push('}');
    // Spaces up to a multiple of 8, as safetensors pads, so the data starts 8-byte aligned.
    header.extend(std::iter::repeat_n(' ', header.len().next_multiple_of(8) - header.len()));

    let mut bytes = Vec::with_capacity(8 + header.len() + end);
    bytes.extend((header.len() as u64).to_le_bytes());
    bytes.extend(header.as_bytes());
    for value in tensors.iter().flat_map(|(_, values)| values) {
        bytes.extend(value.to_le_bytes());
    }
    Ok(bytes)
}

/// The parsed header and the data section it indexes.
struct WeightFile<'a> {
    header: Metadata,
    data: &'a [u8],
}

fn read_checked(bytes: &[u8]) -> Result<(WeightFileInfo, NamedValues), WeightError> {
    let file = WeightFile::parse(bytes)?;
    let (info, from_metadata) = file.info()?;
    let specs = match file.check_layout(&info.config) {
        Ok(specs) => specs,
        // Tensors that are all of one other valid model mean the metadata is wrong: say so,
        // rather than naming the first tensor that disagrees.
        Err(problem) => match file.infer_config() {
            Ok(found) if from_metadata && file.check_layout(&found).is_ok() => {
                let (described, found) = (describe(&info.config), describe(&found));
                return Err(WeightError::ArchitectureMismatch { described, found });
            }
            _ => return Err(problem),
        },
    };
    let tensors = specs.into_iter().map(|spec| file.values(spec)).collect::<Result<_, _>>()?;
    Ok((info, tensors))
}

impl<'a> WeightFile<'a> {
    fn parse(bytes: &'a [u8]) -> Result<Self, WeightError> {
        let Some(length_field) = bytes.first_chunk::<8>() else {
            let message = format!("the file is {} bytes, too short for a safetensors header", bytes.len());
            return Err(WeightError::NotSafetensors(message));
        };
        // Checked here rather than left to the crate, to say what is wrong in words.
        let header_length = u64::from_le_bytes(*length_field);
        let after = bytes.len() as u64 - 8;
        if header_length > after {
            let message = format!(
                "its header length field says {header_length} bytes but only {after} bytes follow: \
                 the file is truncated or not a safetensors file"
            );
            return Err(WeightError::NotSafetensors(message));
        }
        let (header_length, header) = SafeTensors::read_metadata(bytes).map_err(|error| {
            WeightError::NotSafetensors(match error {
                SafeTensorError::MetadataIncompleteBuffer => {
                    "the header's tensors do not fill the file exactly: it is truncated or has bytes appended".into()
                }
                SafeTensorError::InvalidHeaderDeserialization(error) => format!("its header is not safetensors JSON ({error})"),
                other => other.to_string(),
            })
        })?;
        Ok(Self { header, data: &bytes[8 + header_length..] })
    }

    /// The file's info, and whether it came from our metadata (else it was read off the shapes).
    fn info(&self) -> Result<(WeightFileInfo, bool), WeightError> {
        let get = |key: &str| self.header.metadata().as_ref().and_then(|entries| entries.get(key)).map(String::as_str);
        let Some(format) = get("weights_format") else {
            let config = self.infer_config()?;
            let preset = preset_of(&config);
            let config = preset.map_or(config, Preset::config);
            return Ok((WeightFileInfo::new(config, preset), false));
        };
        if format != FORMAT {
            return Err(WeightError::UnsupportedFormat { found: format.into() });
        }
        let bad = |what: &str, error: &dyn std::fmt::Display| WeightError::Metadata(format!("{what}: {error}"));
        let config_json = get("config").ok_or_else(|| WeightError::Metadata("there is no 'config' entry".into()))?;
        let config: VitConfig = serde_json::from_str(config_json).map_err(|error| bad("config is not a ViT config", &error))?;
        check_config(&config)?;
        let preset = get("preset").map(str::parse::<Preset>).transpose().map_err(|error| bad("preset", &error))?;
        let class_names = match get("class_names") {
            Some(names) => serde_json::from_str(names).map_err(|error| bad("class_names is not a list of names", &error))?,
            None => default_class_names(config.classes),
        };
        if class_names.len() != config.classes {
            return Err(class_count_error(class_names.len(), config.classes));
        }
        let epoch = get("epoch").map(str::parse::<usize>).transpose().map_err(|error| bad("epoch", &error))?;
        let info = WeightFileInfo {
            config,
            preset,
            class_names,
            recipe_json: get("recipe").unwrap_or_default().into(),
            epoch: epoch.unwrap_or(0),
            metrics_json: get("metrics").unwrap_or_default().into(),
            data_json: get("data").unwrap_or_default().into(),
            base_json: get("base").unwrap_or_default().into(),
        };
        Ok((info, true))
    }

    /// Reads the config off the tensor shapes, as documented on [`from_safetensors`].
    fn infer_config(&self) -> Result<VitConfig, WeightError> {
        let shape = |name: &str| {
            let info = self.header.info(name).ok_or_else(|| WeightError::MissingTensor(name.into()))?;
            Ok::<_, WeightError>(info.shape.as_slice())
        };
        let unrecognised = |name: &str, found: &[usize], needs| WeightError::UnrecognisedShape { name: name.into(), found: found.to_vec(), needs };

        let patch = shape("pe.weight")?;
        let &[embed_dim, channels, patch_size, patch_width] = patch else {
            return Err(unrecognised("pe.weight", patch, "[D, channels, P, P]"));
        };
        if patch_width != patch_size {
            return Err(unrecognised("pe.weight", patch, "[D, channels, P, P]"));
        }
        let position = shape("pos")?;
        let grid = match *position {
            [1, tokens, dim] if dim == embed_dim && tokens > 1 => Some((tokens - 1).isqrt()).filter(|grid| grid * grid == tokens - 1),
            _ => None,
        };
        let Some(grid) = grid else {
            return Err(unrecognised("pos", position, "[1, N + 1, D] with N a square number of patches"));
        };
        let depth = self
            .header
            .offset_keys()
            .iter()
            .filter_map(|name| name.strip_prefix("blocks.")?.split('.').next()?.parse::<usize>().ok())
            .max()
            .map_or(0, |last| last + 1);
        let mlp = shape("blocks.0.mlp.0.weight")?;
        let &[mlp_dim, _] = mlp else {
            return Err(unrecognised("blocks.0.mlp.0.weight", mlp, "[MLP, D]"));
        };
        let head = shape("head.weight")?;
        let &[classes, _] = head else {
            return Err(unrecognised("head.weight", head, "[classes, D]"));
        };
        let heads = if embed_dim % 32 == 0 { embed_dim / 32 } else { 1 };
        let config = VitConfig::new(grid * patch_size, channels, patch_size, embed_dim, depth, heads, mlp_dim, classes);
        check_config(&config)?;
        Ok(config)
    }

    /// Every tensor `config` needs is present, F32 and of the right shape, and no other is.
    fn check_layout(&self, config: &VitConfig) -> Result<Vec<TensorSpec>, WeightError> {
        let expected = expected_tensors(config);
        for spec in &expected {
            let info = self.header.info(&spec.name).ok_or_else(|| WeightError::MissingTensor(spec.name.clone()))?;
            if info.dtype != Dtype::F32 {
                return Err(WeightError::WrongDtype { name: spec.name.clone(), dtype: info.dtype.to_string() });
            }
            if info.shape != spec.shape {
                let (found, expected, model) = (info.shape.clone(), spec.shape.clone(), describe(config));
                return Err(WeightError::WrongShape { name: spec.name.clone(), found, expected, model });
            }
        }
        if let Some(name) = self.header.offset_keys().into_iter().find(|name| !expected.iter().any(|spec| &spec.name == name)) {
            return Err(WeightError::UnexpectedTensor { name, model: describe(config) });
        }
        Ok(expected)
    }

    /// A checked tensor's values, refused if any is NaN or infinite.
    fn values(&self, spec: TensorSpec) -> Result<(TensorSpec, Vec<f32>), WeightError> {
        let (start, end) = self.header.info(&spec.name).map_or((0, 0), |info| info.data_offsets);
        let values: Vec<f32> = self.data[start..end]
            .chunks_exact(4)
            .map(|bytes| f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
            .collect();
        check_finite(&spec.name, &values)?;
        Ok((spec, values))
    }
}

/// Builds the model with `config.init` and replaces every parameter through the name table.
fn build_model(config: &VitConfig, tensors: NamedValues, device: &Device) -> VisionTransformer {
    struct Loader<'a> {
        tensors: HashMap<String, (Vec<usize>, Vec<f32>)>,
        device: &'a Device,
    }
    impl ParameterVisitor for Loader<'_> {
        fn visit<const D: usize>(&mut self, name: String, layout: Layout, param: &mut Param<Tensor<D>>) {
            // Present and of the right shape: `read_checked` saw to it.
            let Some((shape, values)) = self.tensors.remove(&name) else { return };
            let (shape, values) = match layout {
                Layout::AsIs => (shape, values),
                Layout::Transposed => (vec![shape[1], shape[0]], transpose(&values, shape[0], shape[1])),
            };
            *param = Param::from_data(TensorData::new(values, shape), self.device);
        }
    }
    let tensors = tensors.into_iter().map(|(spec, values)| (spec.name, (spec.shape, values))).collect();
    let mut model = config.init(device);
    visit_parameters(&mut model, &mut Loader { tensors, device });
    model
}

/// A row-major `[rows, cols]` matrix's values as its row-major `[cols, rows]` transpose.
fn transpose(values: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    (0..cols).flat_map(|col| (0..rows).map(move |row| values[row * cols + col])).collect()
}

fn check_finite(name: &str, values: &[f32]) -> Result<(), WeightError> {
    let problem = if values.iter().any(|value| value.is_nan()) {
        "NaN"
    } else if values.iter().any(|value| value.is_infinite()) {
        "an infinite value"
    } else {
        return Ok(());
    };
    Err(WeightError::NotFinite { name: name.into(), problem })
}

fn check_config(config: &VitConfig) -> Result<(), WeightError> {
    config.validate().map_err(|problem| WeightError::Metadata(format!("invalid config: {problem}")))?;
    let dimensions = [config.image_size, config.channels, config.patch_size, config.embed_dim, config.depth, config.heads, config.mlp_dim, config.classes];
    if dimensions.iter().any(|&dimension| dimension > LARGEST_DIMENSION) {
        return Err(WeightError::Metadata(format!("a dimension of {config:?} exceeds {LARGEST_DIMENSION}")));
    }
    Ok(())
}

/// What can be checked of `info` before the weights are read back.
fn check_info(info: &WeightFileInfo) -> Result<(), WeightError> {
    check_config(&info.config)?;
    if info.class_names.len() != info.config.classes {
        return Err(class_count_error(info.class_names.len(), info.config.classes));
    }
    Ok(())
}

fn class_count_error(names: usize, classes: usize) -> WeightError {
    WeightError::Metadata(format!("the file names {names} classes but its head has {classes} outputs"))
}

/// CIFAR-10's names for ten classes, else "class 0", "class 1", ….
fn default_class_names(classes: usize) -> Vec<String> {
    if classes == CLASS_NAMES.len() {
        CLASS_NAMES.iter().map(|name| name.to_string()).collect()
    } else {
        (0..classes).map(|index| format!("class {index}")).collect()
    }
}

/// The preset whose dimensions (all but dropout) `config` has.
pub fn preset_of(config: &VitConfig) -> Option<Preset> {
    Preset::ALL.into_iter().find(|preset| VitConfig { dropout: config.dropout, ..preset.config() } == *config)
}

/// "a tiny model (D=128, 4 layers, MLP 256, P=4, 32×32 images, 10 classes)": the dimensions a
/// file's tensors show (heads and dropout are in no shape).
fn describe(config: &VitConfig) -> String {
    let kind = preset_of(config).map_or("custom", Preset::name);
    let VitConfig { embed_dim, depth, mlp_dim, patch_size, image_size, classes, .. } = config;
    format!("a {kind} model (D={embed_dim}, {depth} layers, MLP {mlp_dim}, P={patch_size}, {image_size}×{image_size} images, {classes} classes)")
}

fn json<T: serde::Serialize + ?Sized>(value: &T) -> Result<String, WeightError> {
    serde_json::to_string(value).map_err(|error| WeightError::Metadata(error.to_string()))
}
