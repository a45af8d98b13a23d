// The scale's and shift's gradients of a layer norm, Σ_rows ∂out·x̂ and Σ_rows ∂out, split over
// the rows of grad [ROWS, WIDTH] (whose x is every EVERY-th row of x [ROWS · EVERY, WIDTH]): one
// workgroup per range of RANGE rows, its invocations laid out as ROW_LANES rows of WIDTH4 column
// quads, so that a row's neighbouring values go to neighbouring invocations. Each invocation adds
// every ROW_LANES-th row of the range, the workgroup adds its rows' sums, and the range's partial
// sums go to parts [RANGES, 2, WIDTH] (scale's, then shift's), which the partials kernel adds.
const ROWS: u32 = {{rows}}u;
const EVERY: u32 = {{every}}u;
const WIDTH4: u32 = {{width4}}u;
const RANGES: u32 = {{ranges}}u;
const RANGE: u32 = {{range}}u;
const ROW_LANES: u32 = 256u / WIDTH4;

@group(0) @binding(0) var<storage, read_write> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> grad: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> statistics: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> parts: array<vec4<f32>>;

var<workgroup> scales: array<vec4<f32>, 256>;
var<workgroup> shifts: array<vec4<f32>, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let range = group.x + group.y * groups.x;  // uniform across the workgroup
    if (range >= RANGES) {
        return;
    }
    let c = lane % WIDTH4;
    let row_lane = lane / WIDTH4;
    var scale = vec4<f32>();
    var shift = vec4<f32>();
    if (row_lane < ROW_LANES) {
        let end = min(ROWS, (range + 1u) * RANGE);
        for (var row = range * RANGE + row_lane; row < end; row += ROW_LANES) {
            let s = statistics[row];
            let g = grad[row * WIDTH4 + c];
            scale += g * (x[row * EVERY * WIDTH4 + c] - s.x) * s.y;
            shift += g;
        }
    }
    scales[lane] = scale;
    shifts[lane] = shift;
    workgroupBarrier();
    if (row_lane == 0u) {
        for (var other = 1u; other < ROW_LANES; other++) {
            scale += scales[other * WIDTH4 + c];
            shift += shifts[other * WIDTH4 + c];
        }
        parts[(range * 2u) * WIDTH4 + c] = scale;
        parts[(range * 2u + 1u) * WIDTH4 + c] = shift;
    }
}
