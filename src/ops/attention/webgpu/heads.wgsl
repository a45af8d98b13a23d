// What both attention kernels share: a head's rows in workgroup memory, [TOKENS][HEAD_DIM4], and
// where row `token` of part `part` (0 query, 1 key, 2 value) of head `head` of image `image`
// starts in qkv.
var<workgroup> rows: array<vec4<f32>, TOKENS * HEAD_DIM4>;

fn at(image: u32, token: u32, part: u32, head: u32) -> u32 {
    return (image * TOKENS + token) * 3u * D4 + part * D4 + head * HEAD_DIM4;
}
