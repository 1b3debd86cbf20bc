"""The real model files the port tests convert, where each comes from, how to build and feed it.

Each file is read at test time from a pinned registry package (tests/port/sources.py), never
copied into this repository. Where a file holds definitions that need packages these tests do
not have (a LightningModule beside the model), or a model needs definitions from several files
of its package (torchvision's MobileNetV2 and its Conv2dNormActivation), the named top-level
definitions are taken with the files' imports they use, their source text untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest

from .sources import (DIFFUSERS, IGNITE, LIGHTNING, OPENAI_CLIP, ROBUSTBENCH, SEGMENT_ANYTHING, THUNDER, TORCHTUNE,
                      TORCHVISION, TRANSFORMERS, WHISPER, LLAMA_MODELS, MISTRAL, Archive, Unreachable, definitions)


@dataclass(frozen=True)
class Part:
    archive: Archive
    member: str  # the file's path inside the package
    names: tuple[str, ...] = ()  # only these top-level definitions (else the whole file)

    def __str__(self) -> str:
        return f"{self.archive.requirement}: {self.member}" + (f" ({', '.join(self.names)})" if self.names else "")


@dataclass(frozen=True)
class Model:
    name: str
    parts: tuple[Part, ...]
    build: str  # an expression in the model's module namespace: a module, or a function of the inputs
    inputs: Callable  # (numpy random generator) → list of numpy arrays
    hidden: str = ""  # a method that builds the recurrent state from the batch size
    batch_axis: int = 1  # where the batch size is in the first input (for `hidden`)
    stage: str = "PASS"  # how far the port gets (harness.STAGES); the open set's tests assert it

    @property
    def origin(self) -> str:
        return "; ".join(map(str, self.parts))

    def source(self) -> str:
        """The model file's text (raises sources.Unreachable when the registry cannot be reached)."""
        if len(self.parts) == 1 and not self.parts[0].names:
            return self.parts[0].archive.read(self.parts[0].member)
        return definitions([(part.archive.read(part.member), part.names) for part in self.parts])


def model_source(model: Model) -> str:
    """The model file's text in a test; the test skips, saying why, when the registry cannot be reached."""
    try:
        return model.source()
    except Unreachable as exc:
        pytest.skip(f"{model.origin}: the registry cannot be reached: {exc}")


def _floats(shape):
    return lambda rng: rng.standard_normal(shape).astype("float32")


def _ints(vocab, shape):
    return lambda rng: rng.integers(0, vocab, shape).astype("int64")


def _arrays(*makers):
    """The inputs: each maker called with the generator; a plain value (a flag) passed as it is."""
    return lambda rng: [m(rng) if callable(m) else m for m in makers]


def _images(shape):
    return _arrays(_floats(shape))


def _tokens(vocab, shape):
    return _arrays(_ints(vocab, shape))


MODELS = [
    # a CIFAR ResNet-18: BatchNorm, residual `out += self.shortcut(x)`, F.avg_pool2d, x.view(x.size(0), -1)
    Model("cifar_resnet", (Part(ROBUSTBENCH, "robustbench/model_zoo/architectures/resnet.py"),), "ResNet18()",
          _images((2, 3, 32, 32))),
    # torchvision's MobileNetV2: depthwise-separable inverted residuals, built by Conv2dNormActivation from
    # layer classes passed as values (the port's adapters take torch's arguments there); type hints,
    # nn.init over self.modules(), _log_api_usage_once
    Model("mobilenet_v2", (Part(TORCHVISION, "torchvision/utils.py", ("_log_api_usage_once", "_make_ntuple")),
                           Part(TORCHVISION, "torchvision/models/_utils.py", ("_make_divisible",)),
                           Part(TORCHVISION, "torchvision/ops/misc.py", ("ConvNormActivation", "Conv2dNormActivation")),
                           Part(TORCHVISION, "torchvision/models/mobilenetv2.py", ("InvertedResidual", "MobileNetV2"))),
          # 64×64, 4 images: BatchNorm statistics over 2 values per channel at the last stride (32×32,
          # 2 images) put torch's own float32 output 3e-4 from its float64 one, at the msprobe threshold
          "MobileNetV2(num_classes=10, width_mult=0.25)", _images((4, 3, 64, 64))),
    # torchvision's ImageNet ResNet-18 beside it: the same block through torchvision's machinery (norm_layer
    # passed as a value, `nn.init` over self.modules(), zero_init_residual's `m.bn2.weight` marked MS301)
    Model("torchvision_resnet", (Part(TORCHVISION, "torchvision/utils.py", ("_log_api_usage_once",)),
                                 Part(TORCHVISION, "torchvision/models/resnet.py",
                                      ("conv3x3", "conv1x1", "BasicBlock", "Bottleneck", "ResNet"))),
          "ResNet(BasicBlock, [2, 2, 2, 2], num_classes=10)", _images((4, 3, 64, 64))),
    # ESPCN from pytorch/examples: PixelShuffle, init.orthogonal_ with calculate_gain
    Model("super_resolution", (Part(IGNITE, "examples/super_resolution/model.py"),), "Net(upscale_factor=3)",
          _images((2, 1, 24, 24))),
    # fast-neural-style's TransformerNet from pytorch/examples: ReflectionPad2d, InstanceNorm2d, interpolate
    Model("style_transfer", (Part(IGNITE, "examples/fast_neural_style/transformer_net.py"),), "TransformerNet()",
          _images((1, 3, 32, 32))),
    # the LSTM language model of Lightning's demos (after pytorch/examples' word_language_model): init_hidden
    Model("lstm_language_model", (Part(LIGHTNING, "lightning/pytorch/demos/lstm.py", ("SimpleLSTM",)),),
          "SimpleLSTM(vocab_size=50, ninp=16, nhid=24, nlayers=2)", _tokens(50, (3, 7)), hidden="init_hidden",
          batch_axis=0),
    # nanoGPT's model.py as Lightning Thunder ships it: LayerNorm, GELU, causal self-attention, weight tying
    Model("nanogpt", (Part(THUNDER, "thunder/tests/nanogpt_model.py"),),
          "GPT(GPTConfig(block_size=16, vocab_size=64, n_layer=2, n_head=2, n_embd=16))", _tokens(64, (2, 12))),
]

# The open set: transformer-era model files (attention, rotary embeddings, KV caches, windowed and
# relative-position attention, encoder-decoders), each with the stage its port reaches today.
_MISC = "torchvision/ops/misc.py"
_DEPTH = Part(TORCHVISION, "torchvision/ops/stochastic_depth.py", ("stochastic_depth", "StochasticDepth"))
_LOG = Part(TORCHVISION, "torchvision/utils.py", ("_log_api_usage_once", "_make_ntuple"))
_WHISPER = ("SDPA_AVAILABLE", "sinusoids", "LayerNorm", "Linear", "Conv1d", "MultiHeadAttention",
            "ResidualAttentionBlock")
_SWIN = ("_patch_merging_pad", "_get_relative_position_bias", "PatchMerging", "PatchMergingV2",
         "shifted_window_attention", "ShiftedWindowAttention", "ShiftedWindowAttentionV2", "SwinTransformerBlock",
         "SwinTransformerBlockV2", "SwinTransformer")
_SAM = "segment_anything/modeling/"
_SAM_TRANSFORMER = ("TwoWayTransformer", "TwoWayAttentionBlock", "Attention")
_LLAMA = "transformers/models/llama/modeling_llama.py"
OPEN_SET = [
    # OpenAI Whisper's audio encoder: Conv1d subsampler, sinusoid buffer, SDPA attention, LayerNorm subclasses
    Model("whisper_encoder", (Part(WHISPER, "whisper/model.py", (*_WHISPER, "AudioEncoder")),),
          "AudioEncoder(8, 16, 32, 4, 2)", _images((2, 8, 32)), stage="imports"),
    # its text decoder: token embedding tied to the logits, a causal mask buffer, cross-attention
    Model("whisper_decoder", (Part(WHISPER, "whisper/model.py", (*_WHISPER, "TextDecoder")),),
          "TextDecoder(64, 8, 32, 4, 2)", _arrays(_ints(64, (2, 6)), _floats((2, 16, 32))), stage="imports"),
    # OpenAI CLIP's vision transformer: nn.MultiheadAttention, OrderedDict-built Sequential, QuickGELU
    Model("clip_vit", (Part(OPENAI_CLIP, "clip/model.py"),), "VisionTransformer(32, 8, 32, 2, 4, 16)",
          _images((2, 3, 32, 32)), stage="PASS"),
    # the whole CLIP with its text tower: causal mask, argmax pooling, logit scale
    Model("clip", (Part(OPENAI_CLIP, "clip/model.py"),), "CLIP(16, 32, 2, 64, 8, 8, 64, 32, 4, 2)",
          _arrays(_floats((2, 3, 32, 32)), _ints(64, (2, 8))), stage="imports"),
    # CLIP's ModifiedResNet: attention pooling through F.multi_head_attention_forward
    Model("clip_resnet", (Part(OPENAI_CLIP, "clip/model.py"),), "ModifiedResNet((1, 1, 1, 1), 16, 4, 64, 8)",
          _images((2, 3, 64, 64)), stage="loads"),
    # torchvision's ViT: class token, nn.MultiheadAttention, a load_state_dict hook (MLPBlock)
    Model("torchvision_vit", (_LOG, Part(TORCHVISION, _MISC, ("ConvNormActivation", "Conv2dNormActivation", "MLP")),
                              Part(TORCHVISION, "torchvision/models/vision_transformer.py",
                                   ("ConvStemConfig", "MLPBlock", "EncoderBlock", "Encoder", "VisionTransformer"))),
          "VisionTransformer(32, 8, 2, 4, 32, 64, num_classes=10)", _images((2, 3, 32, 32)), stage="imports"),
    # torchvision's Swin: shifted windows (torch.roll), relative position bias index buffer
    Model("torchvision_swin", (_LOG, Part(TORCHVISION, _MISC, ("MLP", "Permute")), _DEPTH,
                               Part(TORCHVISION, "torchvision/models/swin_transformer.py", _SWIN)),
          "SwinTransformer([4, 4], 16, [2, 2], [2, 4], [4, 4], num_classes=10)", _images((2, 3, 32, 32)),
          stage="PASS"),
    # Swin V2: cosine attention, continuous position bias MLP, log-spaced coordinates table
    Model("torchvision_swin_v2", (_LOG, Part(TORCHVISION, _MISC, ("MLP", "Permute")), _DEPTH,
                                  Part(TORCHVISION, "torchvision/models/swin_transformer.py", _SWIN)),
          "SwinTransformer([4, 4], 16, [2, 2], [2, 4], [4, 4], num_classes=10, block=SwinTransformerBlockV2, "
          "downsample_layer=PatchMergingV2)", _images((2, 3, 32, 32)), stage="PASS"),
    # Video Swin (3-D windows) on the 2-D blocks
    Model("torchvision_swin3d", (_LOG, Part(TORCHVISION, _MISC, ("MLP", "Permute")), _DEPTH,
                                 Part(TORCHVISION, "torchvision/models/swin_transformer.py",
                                      ("PatchMerging", "_patch_merging_pad", "SwinTransformerBlock",
                                       "ShiftedWindowAttention", "shifted_window_attention",
                                       "_get_relative_position_bias")),
                                 Part(TORCHVISION, "torchvision/models/video/swin_transformer.py",
                                      ("_get_window_and_shift_size", "_get_relative_position_bias",
                                       "_compute_pad_size_3d", "_compute_attention_mask_3d",
                                       "shifted_window_attention_3d", "ShiftedWindowAttention3d", "PatchEmbed3d",
                                       "SwinTransformer3d"))),
          "SwinTransformer3d([2, 4, 4], 16, [2, 2], [2, 4], [2, 4, 4], num_classes=10)", _images((2, 3, 4, 32, 32)),
          stage="loads"),
    # torchvision's MaxViT: MBConv, block and grid attention, relative position index
    Model("torchvision_maxvit", (_LOG, Part(TORCHVISION, _MISC, ("ConvNormActivation", "Conv2dNormActivation",
                                                                 "SqueezeExcitation")), _DEPTH,
                                 Part(TORCHVISION, "torchvision/models/maxvit.py",
                                      ("_get_conv_output_shape", "_make_block_input_shapes",
                                       "_get_relative_position_index", "MBConv", "RelativePositionalMultiHeadAttention",
                                       "SwapAxes", "WindowPartition", "WindowDepartition", "PartitionAttentionLayer",
                                       "MaxVitLayer", "MaxVitBlock", "MaxVit"))),
          "MaxVit((32, 32), 8, 2, [16, 32], [1, 1], 8, 0.0, num_classes=10)", _images((2, 3, 32, 32)), stage="PASS"),
    # torchvision's ConvNeXt: a LayerNorm subclass over channels, Permute, layer scale
    Model("torchvision_convnext", (_LOG, Part(TORCHVISION, _MISC, ("ConvNormActivation", "Conv2dNormActivation",
                                                                   "Permute")), _DEPTH,
                                   Part(TORCHVISION, "torchvision/models/convnext.py",
                                        ("LayerNorm2d", "CNBlock", "CNBlockConfig", "ConvNeXt"))),
          "ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)], num_classes=10)", _images((2, 3, 32, 32)),
          stage="PASS"),
    # Lightning's transformer demo: nn.Transformer encoder-decoder, a lazily built positional table
    Model("lightning_transformer", (Part(LIGHTNING, "lightning/pytorch/demos/transformer.py",
                                         ("Transformer", "PositionalEncoding")),),
          "Transformer(vocab_size=64, ninp=32, nhead=4, nhid=64, nlayers=2, dropout=0.0)",
          _arrays(_ints(64, (2, 7)), _ints(64, (2, 7))), stage="PASS"),
    # llama2.c's Llama 2 as Lightning Thunder ships it: RMSNorm, rotary, GQA, SDPA is_causal, weight tying
    Model("llama2", (Part(THUNDER, "thunder/tests/llama2_model.py"),),
          "Transformer(ModelArgs(dim=32, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=64, multiple_of=16, "
          "max_seq_len=16))", _tokens(64, (2, 9)), stage="PASS"),
    # Segment Anything's image encoder: windowed ViT with decomposed relative positions
    Model("sam_image_encoder", (Part(SEGMENT_ANYTHING, _SAM + "common.py", ("MLPBlock", "LayerNorm2d")),
                                Part(SEGMENT_ANYTHING, _SAM + "image_encoder.py",
                                     ("ImageEncoderViT", "Block", "Attention", "window_partition", "window_unpartition",
                                      "get_rel_pos", "add_decomposed_rel_pos", "PatchEmbed"))),
          "ImageEncoderViT(img_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=4, out_chans=16, "
          "use_rel_pos=True, window_size=2, global_attn_indexes=(1,))", _images((2, 3, 32, 32)), stage="PASS"),
    # its two-way transformer between prompt tokens and the image
    Model("sam_two_way_transformer", (Part(SEGMENT_ANYTHING, _SAM + "common.py", ("MLPBlock",)),
                                      Part(SEGMENT_ANYTHING, _SAM + "transformer.py", _SAM_TRANSFORMER)),
          "TwoWayTransformer(depth=2, embedding_dim=32, num_heads=4, mlp_dim=64)",
          _arrays(_floats((2, 32, 4, 4)), _floats((2, 32, 4, 4)), _floats((2, 5, 32))), stage="PASS"),
    # its mask decoder: ConvTranspose2d upscaling, hypernetwork MLPs
    Model("sam_mask_decoder", (Part(SEGMENT_ANYTHING, _SAM + "common.py", ("MLPBlock", "LayerNorm2d")),
                               Part(SEGMENT_ANYTHING, _SAM + "transformer.py", _SAM_TRANSFORMER),
                               Part(SEGMENT_ANYTHING, _SAM + "mask_decoder.py", ("MaskDecoder", "MLP"))),
          "MaskDecoder(transformer_dim=32, transformer=TwoWayTransformer(depth=1, embedding_dim=32, num_heads=4, "
          "mlp_dim=64), iou_head_hidden_dim=16)", _arrays(_floats((1, 32, 4, 4)), _floats((1, 32, 4, 4)),
                                                         _floats((2, 3, 32)), _floats((2, 32, 4, 4)), True), stage="PASS"),
    # torchtune's rotary embeddings: a cos/sin cache built into a non-persistent buffer
    Model("torchtune_rope", (Part(TORCHTUNE, "torchtune/modules/position_embeddings.py",
                                  ("RotaryPositionalEmbeddings",)),),
          "RotaryPositionalEmbeddings(8, max_seq_len=16)", _images((2, 6, 4, 8)), stage="PASS"),
    # torchtune's RMSNorm
    Model("torchtune_rms_norm", (Part(TORCHTUNE, "torchtune/modules/rms_norm.py"),), "RMSNorm(32)",
          _images((2, 5, 32)), stage="PASS"),
    # diffusers' sinusoidal timestep embedding of the UNets
    Model("diffusers_timesteps", (Part(DIFFUSERS, "diffusers/models/embeddings.py",
                                       ("get_timestep_embedding", "Timesteps")),),
          "Timesteps(32, True, 0)", _arrays(lambda rng: rng.uniform(0, 1000, (4,)).astype("float32")), stage="PASS"),
    # Segment Anything's random Fourier position encoding of the prompt encoder (a Gaussian matrix buffer)
    Model("sam_position_embedding", (Part(SEGMENT_ANYTHING, _SAM + "prompt_encoder.py",
                                          ("PositionEmbeddingRandom",)),),
          "PositionEmbeddingRandom(16)", _arrays((4, 6)), stage="PASS"),
    # Mistral's complex rotary embeddings: torch.polar, view_as_complex, view_as_real
    Model("mistral_rope", (Part(MISTRAL, "mistral_inference/rope.py", ("precompute_freqs_cis", "apply_rotary_emb")),),
          "lambda q, k: apply_rotary_emb(q, k, precompute_freqs_cis(8, 6, 10000.0))",
          _arrays(_floats((2, 6, 4, 8)), _floats((2, 6, 2, 8))), stage="PASS"),
    # Llama 3's complex rotary embeddings with its frequency scaling
    Model("llama3_rope", (Part(LLAMA_MODELS, "llama_models/llama3/model.py",
                               ("apply_scaling", "precompute_freqs_cis", "reshape_for_broadcast", "apply_rotary_emb")),),
          "lambda q, k: apply_rotary_emb(q, k, precompute_freqs_cis(8, 6, use_scaled=True))",
          _arrays(_floats((2, 6, 4, 8)), _floats((2, 6, 4, 8))), stage="PASS"),
    # Hugging Face Llama's rotate-half rotary and grouped-query key/value repetition
    Model("hf_llama_rotary", (Part(TRANSFORMERS, _LLAMA, ("rotate_half", "repeat_kv")),),
          "lambda q, cos, sin: repeat_kv(q * cos + rotate_half(q) * sin, 2)",
          _arrays(_floats((2, 2, 6, 8)), _floats((6, 8)), _floats((6, 8))), stage="PASS"),
    # Hugging Face T5's layer norm (RMS, no bias, float32 accumulation)
    Model("t5_layer_norm", (Part(TRANSFORMERS, "transformers/models/t5/modeling_t5.py", ("T5LayerNorm",)),),
          "T5LayerNorm(32)", _images((2, 5, 32)), stage="PASS"),
]
