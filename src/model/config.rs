use burn::config::Config;
use serde::{Deserialize, Serialize};

/// The named configurations the page and the trainer offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// ViT-Tiny as in the reference notebook: 546,186 parameters.
    Tiny,
    /// A wider, deeper model with dropout, for people with a real GPU.
    Small,
}

impl Preset {
    pub const ALL: [Preset; 2] = [Preset::Tiny, Preset::Small];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Tiny => "tiny",
            Preset::Small => "small",
        }
    }

    pub fn config(self) -> VitConfig {
        match self {
            Preset::Tiny => VitConfig::tiny(),
            Preset::Small => VitConfig::small(),
        }
    }
}

impl std::str::FromStr for Preset {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Preset::ALL
            .into_iter()
            .find(|preset| preset.name() == name)
            .ok_or_else(|| format!("unknown preset '{name}': expected 'tiny' or 'small'"))
    }
}

/// Every dimension of the model. Images are square, `image_size` pixels a side.
#[derive(Config, Debug, PartialEq)]
pub struct VitConfig {
    pub image_size: usize,
    pub channels: usize,
    pub patch_size: usize,
    /// Token width D.
    pub embed_dim: usize,
    /// Number of encoder blocks L.
    pub depth: usize,
    pub heads: usize,
    pub mlp_dim: usize,
    pub classes: usize,
    #[config(default = 0.0)]
    pub dropout: f64,
}

impl VitConfig {
    /// The reference configuration (ViT-Tiny scaled to CIFAR-10).
    pub fn tiny() -> Self {
        Self::new(32, 3, 4, 128, 4, 4, 256, 10)
    }

    pub fn small() -> Self {
        Self::new(32, 3, 4, 256, 6, 8, 512, 10).with_dropout(0.1)
    }

    /// Patches per side: 8 for 32×32 images and P=4.
    pub fn grid_size(&self) -> usize {
        self.image_size / self.patch_size
    }

    /// Patch tokens N, not counting [CLS].
    pub fn patches(&self) -> usize {
        self.grid_size() * self.grid_size()
    }

    /// Tokens the encoder sees: N patches plus [CLS].
    pub fn tokens(&self) -> usize {
        self.patches() + 1
    }

    pub fn head_dim(&self) -> usize {
        self.embed_dim / self.heads
    }

    /// Checks the dimensions fit together, so `init` never panics on a bad config
    /// (a config may come from an uploaded weight file).
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("image_size", self.image_size),
            ("channels", self.channels),
            ("patch_size", self.patch_size),
            ("embed_dim", self.embed_dim),
            ("depth", self.depth),
            ("heads", self.heads),
            ("mlp_dim", self.mlp_dim),
            ("classes", self.classes),
        ];
        if let Some((name, _)) = positive.iter().find(|(_, value)| *value == 0) {
            return Err(format!("{name} must be positive"));
        }
        if !self.image_size.is_multiple_of(self.patch_size) {
            return Err(format!(
                "patch_size {} does not divide image_size {}",
                self.patch_size, self.image_size
            ));
        }
        if !self.embed_dim.is_multiple_of(self.heads) {
            return Err(format!(
                "heads {} does not divide embed_dim {}",
                self.heads, self.embed_dim
            ));
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return Err(format!("dropout {} is outside [0, 1)", self.dropout));
        }
        Ok(())
    }

    /// Parameter count computed from the dimensions alone, to check a built model against.
    pub fn parameter_count(&self) -> usize {
        let d = self.embed_dim;
        let linear = |input: usize, output: usize| input * output + output;
        let layer_norm = 2 * d;
        let patch = self.channels * self.patch_size * self.patch_size * d + d;
        let block = 2 * layer_norm + linear(d, 3 * d) + linear(d, d) + linear(d, self.mlp_dim)
            + linear(self.mlp_dim, d);
        patch + d + self.tokens() * d + self.depth * block + layer_norm + linear(d, self.classes)
    }
}
