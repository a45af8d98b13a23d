//! The model card: preset, parameter count and dimensions of the model the page holds.

use crate::display::group_thousands;
use crate::model::Preset;
use crate::web::app::SharedApp;
use crate::web::dom::set_text;
use crate::weights::preset_of;

/// Describes the current model: its weight file's preset, or the one its config matches.
pub fn show(app: &SharedApp) {
    let app = app.borrow();
    let config = &app.config;
    let preset = app.weights_info.as_ref().map_or_else(|| preset_of(config), |info| info.preset);
    let preset = preset.map_or("custom", Preset::name);
    set_text(
        "model-summary",
        &format!(
            "{preset} preset · {} parameters · {} layers, D={}, {} heads, MLP {}, {}×{} patches of {}×{} px",
            group_thousands(config.parameter_count()),
            config.depth,
            config.embed_dim,
            config.heads,
            config.mlp_dim,
            config.grid_size(),
            config.grid_size(),
            config.patch_size,
            config.patch_size,
        ),
    );
}
