//! The positional embedding's similarity figure from the ViT paper: for each patch position, the
//! cosine similarity of its learned embedding with every other position's, as an 8×8 grid of
//! 8×8 maps. Trained embeddings show each position most similar to its row and column.

use burn::tensor::Tensor;
use wasm_bindgen_futures::spawn_local;
use web_sys::HtmlCanvasElement;

use crate::compute::read_failure;
use crate::model::VisionTransformer;
use crate::viz::colormap::viridis;
use crate::viz::similarity::{ColourScale, position_similarity, tile_index};
use crate::web::app::{SharedApp, show_error};
use crate::web::dom::{draw_colour_bar, element, hidpi_context, set_text};

/// Redraws the figure for the current model (its embedding is read back asynchronously).
pub fn show_current(app: &SharedApp) {
    let model = app.borrow().model.clone();
    spawn_local(async move {
        if let Err(message) = show(&model).await {
            show_error(&message);
        }
    });
}

/// Reads the model's positional embedding and redraws the figure.
async fn show(model: &VisionTransformer) -> Result<(), String> {
    let embedding: Tensor<3> = model.position_embedding.val();
    let [_, tokens, _] = embedding.dims();
    let values = embedding
        .into_data_async()
        .await
        .map_err(|error| read_failure("reading the positional embedding", &error))?
        .convert::<f32>()
        .try_to_vec::<f32>()
        .map_err(|error| format!("unexpected tensor type: {error:?}"))?;
    draw(&position_similarity(&values, tokens), tokens - 1);
    Ok(())
}

fn draw(similarity: &[f32], patches: usize) {
    let canvas: HtmlCanvasElement = element("position-canvas");
    let Some((context, width, _)) = hidpi_context(&canvas) else { return };
    let grid = (patches as f64).sqrt().round() as usize;
    let gap = 3.0;
    let tile = (width - gap * (grid as f64 - 1.0)) / grid as f64;
    let cell = tile / grid as f64;
    let scale = ColourScale::of(similarity);
    context.clear_rect(0.0, 0.0, width, width);
    for row in 0..grid {
        for col in 0..grid {
            let patch = tile_index(row, col, grid);
            let (x0, y0) = (col as f64 * (tile + gap), row as f64 * (tile + gap));
            for other in 0..patches {
                let [red, green, blue] = viridis(scale.position(similarity[patch * patches + other]));
                context.set_fill_style_str(&format!("rgb({red},{green},{blue})"));
                let (x, y) = (x0 + (other % grid) as f64 * cell, y0 + (other / grid) as f64 * cell);
                // Overdraw by a fraction of a pixel so no seams show between cells.
                context.fill_rect(x, y, cell + 0.3, cell + 0.3);
            }
        }
    }
    draw_legend(scale);
    let mean_neighbour = neighbour_similarity(similarity, grid);
    set_text(
        "position-note",
        &format!(
            "Colours span {:.2} to {:.2}, the range between different positions (each with itself is 1). \
             Mean similarity of horizontally adjacent positions: {mean_neighbour:.2}",
            scale.low, scale.high
        ),
    );
    let _ = canvas.set_attribute("data-neighbour-similarity", &format!("{mean_neighbour:.4}"));
}

/// The colour bar under the figure, labelled with the similarities at its ends: the scale
/// follows the embedding, so the numbers say what a colour means this time.
fn draw_legend(scale: ColourScale) {
    draw_colour_bar("position-legend");
    set_text("position-low", &format!("{:.2}", scale.low));
    set_text("position-high", &format!("{:.2}", scale.high));
    let canvas: HtmlCanvasElement = element("position-canvas");
    let _ = canvas.set_attribute("data-colour-range", &format!("{:.4} {:.4}", scale.low, scale.high));
}

/// The mean similarity of each position with its right-hand neighbour: near 0 for random
/// embeddings, high once the model has learned the grid.
fn neighbour_similarity(similarity: &[f32], grid: usize) -> f32 {
    let patches = grid * grid;
    let pairs: Vec<f32> = (0..patches)
        .filter(|patch| patch % grid + 1 < grid)
        .map(|patch| similarity[patch * patches + patch + 1])
        .collect();
    pairs.iter().sum::<f32>() / pairs.len().max(1) as f32
}
