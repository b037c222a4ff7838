// The zoo table: every program of models/zoo/, the sizes it is checked at
// and what is differentiated. Sizes are small (a few dozen entries per
// input) so that finite differences over every entry stay cheap; where an
// input would be large, max_entries samples it.
#include "tests/zoo/zoo_util.h"

namespace tenet::zoo {

namespace {

// One row; the function has the file's name.
ZooCase row(std::string file, ir::SizeBindings sizes, ad::GradRequest request,
            std::vector<InputRange> ranges = {}, int64_t int_hi = 10, int64_t max_entries = 0) {
  ZooCase c;
  c.fn = file;
  c.file = std::move(file);
  c.sizes = std::move(sizes);
  c.request = std::move(request);
  c.ranges = std::move(ranges);
  c.int_hi = int_hi;
  c.max_entries = max_entries;
  return c;
}

// A scalar loss: the gradient of the only output, which is 0-d.
ad::GradRequest scalar() {
  return {};
}
// Vector-Jacobian products for random cotangents of every float output.
ad::GradRequest vjp() {
  return {{}, "", true};
}

// CapsNet at a reduced size with realistic scales: the image in [0, 1),
// weights uniform in +-1/sqrt(fan-in) (so that no layer saturates or
// vanishes), small biases. Every parameter is checked (24 sampled entries
// each) through vector-Jacobian products of all three outputs,
// L = <c1, lengths> + <c2, reconstruction> + c3 loss, so the training loss is
// part of what is checked, and the decoder weights also get O(1) gradients
// through the reconstruction. Through the loss alone they reach L only via
// the 0.0005-weighted reconstruction term: gradients ~1e-7 against L ~ 0.5,
// which float64 finite differences resolve to only ~1e-3 (rounding in L is
// ~1e-16 L / h). The full-size test (capsnet_test.cpp) checks the loss alone.
ZooCase capsnet_small() {
  ZooCase c =
      row("capsnet_small",
          {{"B", 2}, {"C1", 4}, {"P", 8}, {"K", 3}, {"E", 4}, {"H1", 8}, {"H2", 12}}, vjp());
  c.ranges = {{"image", 0, 1},          {"conv1_w", -0.33, 0.33},    // fan-in 9
              {"conv1_b", -0.1, 0.1},   {"primary_w", -0.17, 0.17},  // fan-in 36
              {"primary_b", -0.1, 0.1}, {"W", -0.5, 0.5},            // fan-in 4
              {"dec1_w", -0.29, 0.29},  {"dec1_b", -0.1, 0.1},       // fan-in 12
              {"dec2_w", -0.35, 0.35},  {"dec2_b", -0.1, 0.1},       // fan-in 8
              {"dec3_w", -0.29, 0.29},  {"dec3_b", -0.1, 0.1}};      // fan-in 12
  c.int_hi = 3;                                                      // labels in [0, K)
  c.max_entries = 24;
  return c;
}

}  // namespace

const std::vector<ZooCase>& zoo_table() {
  static const std::vector<ZooCase> table = {
      row("matmul", {{"M", 3}, {"K", 4}, {"N", 2}}, vjp()),
      row("batched_matmul", {{"B", 2}, {"M", 3}, {"K", 4}, {"N", 2}}, vjp()),
      row("linear_bias", {{"N", 3}, {"I", 4}, {"O", 2}}, vjp()),
      row("mlp_relu", {{"N", 3}, {"I", 4}, {"H", 5}, {"O", 2}}, vjp()),
      row("conv2d_stride1",
          {{"B", 2}, {"C", 2}, {"H", 6}, {"W", 5}, {"O", 3}, {"KH", 3}, {"KW", 3}}, vjp()),
      // 7x8 -> 3x3: the last row and the last column are read by no window.
      row("conv2d_stride2",
          {{"B", 2}, {"C", 2}, {"H", 7}, {"W", 8}, {"O", 2}, {"KH", 3}, {"KW", 3}}, vjp()),
      row("conv2d_padded", {{"B", 2}, {"C", 2}, {"H", 5}, {"W", 4}, {"O", 2}}, vjp()),
      row("transposed_conv", {{"B", 2}, {"C", 2}, {"H", 3}, {"W", 2}, {"O", 2}}, vjp()),
      row("conv2d_grouped", {{"B", 2}}, vjp(), {}, 10, 24),
      row("maxpool2x2", {{"B", 2}, {"C", 2}, {"H", 5}, {"W", 6}}, vjp()),
      row("avgpool2x2", {{"B", 2}, {"C", 2}, {"H", 4}, {"W", 5}}, vjp()),
      row("softmax", {{"N", 3}, {"K", 5}}, vjp()),
      row("log_softmax", {{"N", 3}, {"K", 5}}, vjp()),
      row("logsumexp", {{"N", 3}, {"K", 5}}, vjp()),
      row("cross_entropy", {{"N", 4}, {"K", 5}}, scalar(), {}, /*int_hi=*/5),
      row("bce_with_logits", {{"N", 3}, {"K", 4}}, scalar(), {{"y", 0, 1}}),
      row("mse", {{"N", 3}, {"D", 4}}, scalar()),
      row("cosine_similarity", {{"N", 3}, {"D", 4}}, vjp()),
      row("layer_norm", {{"N", 3}, {"D", 5}}, vjp()),
      row("batch_norm", {{"B", 3}, {"C", 2}, {"H", 2}, {"W", 3}}, vjp()),
      row("gelu_tanh", {{"N", 3}, {"D", 4}}, vjp(), {{"x", -3, 3}}),
      row("elu", {{"N", 3}, {"D", 4}}, vjp(), {{"x", -2, 2}}),
      row("squash", {{"B", 2}, {"N", 3}, {"D", 4}}, vjp()),
      row("capsule_transform", {{"B", 2}, {"I", 3}, {"D", 4}, {"J", 2}, {"E", 3}}, vjp()),
      row("routing_step", {{"B", 2}, {"I", 4}, {"J", 3}, {"E", 4}}, vjp()),
      row("routing3", {{"B", 2}, {"I", 4}, {"J", 3}, {"E", 4}}, vjp()),
      // |v| ~ 0.6 keeps both margin terms active (lengths between 0.1 and 0.9).
      row("margin_loss", {{"B", 4}, {"K", 3}, {"E", 4}}, scalar(), {{"v", -0.5, 0.5}},
          /*int_hi=*/3),
      row("masked_decoder",
          {{"B", 2}, {"K", 3}, {"E", 4}, {"H1", 6}, {"H2", 5}, {"Y", 3}, {"X", 4}}, vjp(), {},
          /*int_hi=*/3),
      // The tutorial's shapes: G = 3 S gates over J = S + I features.
      row("lltm", {{"B", 2}, {"I", 3}, {"S", 2}, {"G", 6}, {"J", 5}}, vjp()),
      row("gru_cell", {{"B", 2}, {"I", 3}, {"H", 4}}, vjp()),
      row("attention", {{"B", 2}, {"T", 3}, {"S", 4}, {"D", 4}, {"C", 3}}, vjp()),
      row("einsum_bilinear", {{"N", 3}, {"I", 4}, {"J", 3}, {"O", 2}}, vjp()),
      row("scalar_loss", {{"N", 5}, {"M", 3}}, scalar()),
      row("tc_redefine", {{"N", 3}, {"D", 4}}, vjp()),
      row("tc_product", {{"N", 3}, {"K", 4}}, vjp()),
      row("scans", {{"B", 3}, {"N", 7}}, vjp()),
      capsnet_small(),
      // Tensor Comprehensions' expression syntax (issue 15).
      row("tc_ternary", {{"N", 3}, {"D", 4}}, vjp()),
      row("tc_promotion", {{"N", 3}, {"D", 4}}, vjp(), {}, /*int_hi=*/5),
      row("tc_promotion_update", {{"N", 3}, {"D", 4}}, vjp(), {}, /*int_hi=*/5),
      row("tc_math", {{"N", 6}}, vjp(), {{"x", -0.9, 0.9}, {"p", 0.5, 2}}),
      // Data-dependent reads: integer inputs in [0, 4) index every table in
      // bounds (off + kh < R); P's truncation has no gradient and finite
      // differences across an integer would see a jump, so P is not checked.
      row("tc_gather", {{"V", 5}, {"J", 3}, {"N", 3}, {"K", 2}, {"R", 6}},
          {{"LUT", "W", "s", "X", "taps", "A"}, "", true}, {{"P", 0.1, 4.9}}, /*int_hi=*/4),
      row("tc_index_math", {{"M", 3}, {"Z", 5}}, vjp()),
      // Element types: bool masks (int_hi 2: half of them false), unsigned
      // integers, float16 storage.
      row("tc_bool", {{"N", 3}, {"D", 4}}, vjp(), {}, /*int_hi=*/2),
      row("tc_unsigned", {{"N", 3}, {"C", 4}}, vjp()),
      row("tc_half", {{"N", 3}, {"I", 4}, {"O", 2}}, vjp()),
      // Outputs the caller supplies with their initial values; some initial
      // peaks above every x(n, k), so that max= routes a gradient to them.
      row("tc_update_output", {{"N", 3}, {"K", 4}}, vjp(), {{"peak", 0.5, 1.5}}),
      // PyTorch's detach (issue 16): w only, the one input finite differences
      // and the stopped gradient agree on.
      row("detached_target", {{"N", 3}, {"I", 4}, {"O", 2}}, {{"w"}, "", false}),
      // Reshapes (issue 16): a flatten before a linear layer; heads split,
      // permuted and merged.
      row("flatten_linear", {{"B", 2}, {"O", 3}}, vjp()),
      row("attention_heads", {{"B", 2}, {"T", 3}}, vjp()),
  };
  return table;
}

}  // namespace tenet::zoo
