/* Roofline Atlas calculator: UI around the generated model (generated/calculator/models.js)
 * and data (generated/calculator/data.js). No formula is written here: term times and the
 * speedup come from the sympy-printed functions; this file only sums terms into totals
 * and totals into columns, as roofline.evaluate.CompiledModel.totals / evaluate_columns do.
 *
 * Contract: state in the query string (?gpu=&mode=&recipe=&M=&K=&N=&G=&fusion=0|1&calibrated=0|1
 * and any spec key as an override, in SI units); each output carries data-column (or
 * data-term) and data-value (full precision). calibrated=1 computes the calibrated model
 * (each generated model's .calibrated, with the GPU's calibration parameters from data.js)
 * and shows torchao's speedup beside it (data-role="torchao-speedup"). G > 1 computes a
 * grouped (mixture-of-experts) layer of G experts (each generated model's .grouped, as
 * roofline.evaluate(..., groups=G)); G = 1 (the default, left out of the link) is the dense
 * layer. The model-preset picker fills M, K, N and G from a preset's GEMM, as
 * roofline.presets.ModelPreset.gemm_instances(tokens, ep) does.
 *
 * The query string is attacker-controlled (anyone can send a link): every value is looked
 * up as an own property only (so "__proto__" or "constructor" is just an unknown name),
 * checked against the names, dimension limit and spec-lint ranges in data.js, and shown
 * back only through textContent. A value that fails is reported in a role="alert" box
 * with the CLI's message and replaced by the default, so the calculator keeps working. */
(function () {
  "use strict";

  var loading = null;
  var hasOwn = Object.prototype.hasOwnProperty;
  // What the CLI's shape parser accepts: a plain decimal number (no hex, no "Infinity").
  var NUMBER = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:[eE]([+-]?\d+))?$/;
  // What the CLI's dimension parser accepts: ASCII digits, nothing else.
  var DIGITS = /^[0-9]+$/;
  // A hostile name is shown cut to 60 characters, as the spec lint shows values; a bad
  // dimension as roofline.shapes shows it (at most 40).
  var SHOWN_MAX = 60;

  // obj[key] when obj itself has key, else undefined: never an inherited Object member.
  function own(obj, key) {
    return obj !== null && obj !== undefined && hasOwn.call(obj, key) ? obj[key] : undefined;
  }

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var el = document.createElement("script");
      el.src = src;
      el.onload = resolve;
      el.onerror = function () { reject(new Error("cannot load " + src)); };
      document.head.appendChild(el);
    });
  }

  function loadAll(root) {
    if (window.RooflineModels && window.RooflineCalculatorData) return Promise.resolve();
    if (!loading) {
      loading = loadScript(root + "generated/calculator/models.js").then(function () {
        return loadScript(root + "generated/calculator/data.js");
      });
    }
    return loading;
  }

  // -- the model: totals and columns (mirrors roofline/evaluate.py) -----------------------

  // cal (optional): the GPU's calibration parameters, for the calibrated model.
  // G (optional): the experts of a grouped layer; absent or 1, the dense layer.
  function evaluateColumns(key, mode, M, K, N, hw, cal, G) {
    var models = window.RooflineModels;
    var dense = own(models.models, key);
    if (!dense) throw new Error("no generated model " + key);
    var grouped = G !== undefined && G !== 1;
    // A grouped layer has its own terms (the scale rearrangements); the calibrated model
    // shares torchao's terms (keys, labels, quantities): one meta for both.
    var torchao = grouped ? dense.grouped : dense;
    var model = cal ? torchao.calibrated : torchao;
    var times;
    if (grouped) times = cal ? model.times(M, K, N, G, hw, cal) : model.times(M, K, N, G, hw);
    else times = cal ? model.times(M, K, N, hw, cal) : model.times(M, K, N, hw);
    var T = Object.create(null);
    torchao.meta.terms.forEach(function (t) {
      T[t.quantity] = T[t.quantity] === undefined ? times[t.key] : T[t.quantity] + times[t.key];
    });
    var spec = models.columns;
    Object.keys(spec.quantities).forEach(function (c) {
      var q = spec.quantities[c];
      if (q !== "speedup" && T[q] === undefined) T[q] = 0;  // e.g. no bf16 activation
    });
    T.speedup = model.speedup(T);
    var out = Object.create(null);
    out.fwd_M = M; out.fwd_K = K; out.fwd_N = N;
    spec.columns[mode].slice(3).forEach(function (c) {
      if (own(spec.sums, c)) {
        var qs = spec.sums[c];
        var total = T[qs[0]];
        for (var i = 1; i < qs.length; i++) total = total + T[qs[i]];
        out[c] = total;
      } else {
        out[c] = T[spec.quantities[c]];
      }
    });
    return { columns: out, times: times, terms: torchao.meta.terms, calibrated: !!cal,
             groups: grouped ? G : 1 };
  }

  // -- helpers ------------------------------------------------------------------------------

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];  // never innerHTML: values may be hostile
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  }

  // A template of site_gen.calculator._template: {name} filled in, {{ and }} literal braces.
  // One pass, so a filled-in value (from the link) is never expanded itself.
  function fill(template, values) {
    return template.replace(/\{\{|\}\}|\{(\w+)\}/g, function (m, k) {
      if (k === undefined) return m[0];
      return hasOwn.call(values, k) ? values[k] : m;
    });
  }

  function hex(code, width) {
    var digits = code.toString(16);
    while (digits.length < width) digits = "0" + digits;
    return digits;
  }

  // Python's repr of a str, as the CLI's messages show it: control, format (bidi) and
  // separator characters escaped, so a hostile value cannot disguise the message.
  function pyRepr(text) {
    text = String(text);
    var quote = text.indexOf("'") >= 0 && text.indexOf('"') < 0 ? '"' : "'";
    var named = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };
    var body = text.replace(/[\\'"]|(?! )[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Z}]/gu, function (c) {
      if (hasOwn.call(named, c)) return named[c];
      if (c === "'" || c === '"') return c === quote ? "\\" + c : c;
      var code = c.codePointAt(0);
      if (code <= 0xff) return "\\x" + hex(code, 2);
      return code <= 0xffff ? "\\u" + hex(code, 4) : "\\U" + hex(code, 8);
    });
    return quote + body + quote;
  }

  function shown(text) {  // pyRepr, cut to fewer than SHOWN_MAX characters
    var r = pyRepr(text);
    return r.length < SHOWN_MAX ? r : r.slice(0, SHOWN_MAX - 3) + "...";
  }

  function shownDim(text) {  // roofline.shapes._shown: the repr, cut to at most 40
    var r = pyRepr(text);
    return r.length <= 40 ? r : r.slice(0, 37) + "...";
  }

  function fmtG(x) {  // Python's format(x, "g"), as NumberRange.text() writes the bounds
    if (x === 0 || !isFinite(x)) return String(x);
    var exp = Number(x.toExponential(5).split("e")[1]);
    var parts = (exp < -4 || exp >= 6 ? x.toExponential(5) : x.toPrecision(6)).split("e");
    var mantissa = parts[0].indexOf(".") >= 0 ? parts[0].replace(/\.?0+$/, "") : parts[0];
    if (parts.length === 1) return mantissa;
    var digits = parts[1].replace(/^[+-]/, "");  // Python pads the exponent to two digits
    var sign = parts[1][0] === "-" ? "-" : "+";
    return mantissa + "e" + sign + (digits.length < 2 ? "0" : "") + digits;
  }

  // sys.float_info.min: NumberRange.contains refuses a subnormal number (it divides to inf).
  var MIN_NORMAL = 2.2250738585072014e-308;

  function inRange(range, v) {  // a NumberRange of roofline.specs; null: unbounded end
    if (v !== 0 && Math.abs(v) < MIN_NORMAL) return false;
    if (range.low !== null && (range.low_inclusive ? v < range.low : v <= range.low)) return false;
    return !(range.high !== null && (range.high_inclusive ? v > range.high : v >= range.high));
  }

  function rangeText(range, scale) {  // "(0, 1]" in the unit of scale
    return (range.low_inclusive ? "[" : "(") +
      (range.low === null ? "-inf" : fmtG(range.low / scale)) + ", " +
      (range.high === null ? "inf" : fmtG(range.high / scale)) +
      (range.high_inclusive ? "]" : ")");
  }

  // Decimal text times scale (a power of ten) by moving the exponent, so "0.3" µs is
  // exactly 3e-7 s (as Python would read it), not 0.3 * 1e-6 = 2.9999999999999997e-7.
  function scaled(text, scale) {
    var m = NUMBER.exec(text);
    return Number(m[1] + "e" + (Number(m[2] || 0) + Math.round(Math.log10(scale))));
  }

  // An override as typed (text, in the unit of scale): {value} in SI, or {error}.
  function overrideValue(h, text, scale, unit) {
    var numeric = NUMBER.test(text), v = numeric ? scaled(text, scale) : NaN;
    if (numeric && isFinite(v) && inRange(h.range, v)) return { value: v };
    return { error: h.key + " must be a number in " + rangeText(h.range, scale) +
      (unit ? " " + unit : "") + ", got " + (numeric ? String(Number(text)) : shown(text)) };
  }

  function fmtSeconds(s) {
    if (!isFinite(s)) return String(s);
    if (s >= 1) return s.toPrecision(4) + " s";
    if (s >= 1e-3) return (s * 1e3).toPrecision(4) + " ms";
    return (s * 1e6).toPrecision(4) + " µs";
  }

  function fmtValue(column, v) {
    if (column.indexOf("fwd_") === 0) return String(v);
    if (column === "r_fp8_gemm_and_ovhd_spdp") return v.toFixed(4) + "×";
    return fmtSeconds(v);
  }

  var COLUMN_LABELS = {
    fwd_M: "M (tokens)", fwd_K: "K (in features)", fwd_N: "N (out features)",
    r_bf16_gemm_s: "bf16 GEMM time", r_fp8_gemm_s: "low-precision GEMM time",
    r_bf16_ovhd_s: "bf16 activation kernel", r_fp8_ovhd_s: "cast-kernel overhead",
    r_fp8_gemm_and_ovhd_s: "low-precision total", r_fp8_gemm_and_ovhd_spdp: "speedup over bf16"
  };

  // -- the widget ---------------------------------------------------------------------------

  function Calculator(host) {
    this.host = host;
    this.data = window.RooflineCalculatorData;
    this.build();
    this.readState();
    this.update(false);
  }

  Calculator.prototype.field = function (label, input, hint) {
    return el("label", { class: "ra-calc-field" }, [
      el("span", { class: "ra-calc-label", text: label }), input,
      hint ? el("span", { class: "ra-calc-hint", text: hint }) : null
    ]);
  };

  Calculator.prototype.build = function () {
    var self = this, d = this.data;
    var host = this.host;
    host.textContent = "";
    this.gpu = el("select", { name: "gpu", "aria-label": "GPU" });
    d.gpus.forEach(function (g) { self.gpu.appendChild(el("option", { value: g.name, text: g.name })); });
    this.mode = el("select", { name: "mode", "aria-label": "mode" });
    Object.keys(d.modes).forEach(function (m) { self.mode.appendChild(el("option", { value: m, text: m })); });
    this.recipe = el("select", { name: "recipe", "aria-label": "recipe" });
    this.fusion = el("input", { type: "checkbox", name: "fusion" });
    this.calibrated = el("input", { type: "checkbox", name: "calibrated" });
    this.dims = {};
    ["M", "K", "N", "G"].forEach(function (dim) {
      self.dims[dim] = el("input", { type: "text", inputmode: "numeric", name: dim,
                                     autocomplete: "off", spellcheck: "false" });
    });
    this.preset = el("select", { name: "preset", "aria-label": "shape preset" });
    this.preset.appendChild(el("option", { value: "", text: "choose a preset…" }));
    d.presets.forEach(function (p) { self.preset.appendChild(el("option", { value: p[0], text: p[1] })); });
    this.overrides = {};
    var overrideFields = d.hardware.map(function (h) {
      var input = el("input", { type: "text", inputmode: "decimal", name: h.key, autocomplete: "off" });
      self.overrides[h.key] = input;
      return self.field(h.description, input,
                        h.unit + " · " + h.key + " · " + rangeText(h.range, h.scale));
    });

    var model = el("fieldset", { class: "ra-calc-group" }, [
      el("legend", { text: "Model" }),
      this.field("GPU", this.gpu), this.field("Mode", this.mode), this.field("Recipe", this.recipe),
      el("label", { class: "ra-calc-check" }, [this.fusion,
        el("span", { text: " model fusion (cast reads fused into the previous op)" })]),
      el("label", { class: "ra-calc-check" }, [this.calibrated,
        el("span", { text: " Calibrated model (fitted on public measurements)" })])
    ]);
    var shape = el("fieldset", { class: "ra-calc-group" }, [
      el("legend", { text: "Layer shape: (M × K) @ (K × N)" }),
      this.field("M", this.dims.M, "tokens (in all, for G > 1)"),
      this.field("K", this.dims.K, "input features"),
      this.field("N", this.dims.N, "output features"),
      this.field("G", this.dims.G, "groups (experts): 1 = dense; G > 1 = grouped (MoE) GEMMs, " +
                 "weights G × K × N"),
      this.field("Preset", this.preset)
    ]);
    var models = this.buildModelPresets();
    this.overrideBox = el("details", { class: "ra-calc-overrides" }, [
      el("summary", { text: "Override the GPU's figures (blank: the spec's value)" }),
      el("div", { class: "ra-calc-grid" }, overrideFields)
    ]);
    this.status = el("div", { class: "ra-calc-status", "data-role": "status", role: "status" });
    this.results = el("div", { class: "ra-calc-results" });
    this.command = el("code", { class: "ra-calc-command" });
    this.share = el("button", { type: "button", class: "ra-copy", text: "Copy link" });
    // Tool first: the GPU, recipe and shape, then the answer, then the rest of the form
    // (model presets, overrides), so the form and the result fit the first screen.
    host.appendChild(el("form", { class: "ra-calc-form", autocomplete: "off" }, [model, shape]));
    this.alert = null;  // the box listing the link's rejected values (showProblems)
    host.appendChild(this.status);
    host.appendChild(this.results);
    host.appendChild(el("div", { class: "ra-calc-cli" }, [
      el("span", { text: "Same numbers from the CLI: " }), this.command, this.share]));
    host.appendChild(el("form", { class: "ra-calc-form ra-calc-more", autocomplete: "off" },
                        [models, this.overrideBox]));

    var onChange = function () { self.update(true); };
    [this.gpu, this.recipe, this.fusion, this.calibrated].forEach(function (x) {
      x.addEventListener("change", onChange);
    });
    this.mode.addEventListener("change", function () { self.fillRecipes(self.recipe.value); onChange(); });
    Object.keys(this.dims).forEach(function (k) { self.dims[k].addEventListener("input", onChange); });
    Object.keys(this.overrides).forEach(function (k) { self.overrides[k].addEventListener("input", onChange); });
    this.gpu.addEventListener("change", function () { self.placeholders(); });
    this.preset.addEventListener("change", function () {
      var p = d.presets.filter(function (x) { return x[0] === self.preset.value; })[0];
      if (!p) return;
      self.dims.M.value = p[2]; self.dims.K.value = p[3]; self.dims.N.value = p[4];
      self.dims.G.value = "1";  // the shape presets are dense layers
      onChange();
    });
    this.share.addEventListener("click", function () {
      var text = window.location.href;
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text);
      self.share.textContent = "Copied";
      setTimeout(function () { self.share.textContent = "Copy link"; }, 1500);
    });
  };

  // The mode's recipes as options; wanted if the mode has it, else the default recipe.
  Calculator.prototype.fillRecipes = function (wanted) {
    var self = this, names = own(this.data.modes, this.mode.value) || [];
    var usual = this.data.defaults.recipe, fallback = names.indexOf(usual) >= 0 ? usual : names[0];
    this.recipe.textContent = "";
    names.forEach(function (n) { self.recipe.appendChild(el("option", { value: n, text: n })); });
    this.recipe.value = names.indexOf(wanted) >= 0 ? wanted : fallback;
  };

  // -- the model-preset picker: M, K, N, G of one GEMM of a model preset ------------------
  // data.model_presets (site_gen.calculator_models): per model, each GEMM's rows per token
  // (M = tokens x rows), K, N and runs per step, and its G per expert parallelism; the
  // messages gemm_instances gives for a tokens value it refuses. Names come from a model
  // file: shown through textContent only.

  Calculator.prototype.buildModelPresets = function () {
    var self = this, d = this.data.model_presets;
    this.presetModel = el("select", { name: "preset_model", "aria-label": "model preset" });
    this.presetModel.appendChild(el("option", { value: "", text: "choose a model…" }));
    d.models.forEach(function (m) {
      self.presetModel.appendChild(el("option", { value: m.name, text: m.label }));
    });
    this.presetGemm = el("select", { name: "preset_gemm", "aria-label": "GEMM of the model" });
    this.tokens = el("input", { type: "text", inputmode: "numeric", name: "tokens",
                                autocomplete: "off", spellcheck: "false" });
    this.tokens.value = String(this.data.defaults.tokens);
    this.ep = el("select", { name: "ep", "aria-label": "expert parallelism" });
    this.presetNote = el("p", { class: "ra-calc-note", "data-role": "preset-note" });
    this.presetMessage = el("div", { "data-role": "preset-message" });
    this.fillPresetGemms();
    this.presetModel.addEventListener("change", function () {
      self.fillPresetGemms();
      self.applyPreset();
    });
    [this.presetGemm, this.ep].forEach(function (x) {
      x.addEventListener("change", function () { self.applyPreset(); });
    });
    this.tokens.addEventListener("input", function () { self.applyPreset(); });
    return el("fieldset", { class: "ra-calc-group", "data-role": "model-presets" }, [
      el("legend", { text: "Model preset: fills M, K, N and G" }),
      this.field("Model", this.presetModel), this.field("GEMM", this.presetGemm),
      this.field("Tokens", this.tokens, "per device: micro-batch × sequence length"),
      this.field("EP", this.ep, "expert parallelism: devices sharing the experts"),
      this.presetNote, this.presetMessage
    ]);
  };

  Calculator.prototype.presetData = function () {
    var name = this.presetModel.value;
    return this.data.model_presets.models.filter(function (m) { return m.name === name; })[0];
  };

  // The chosen model's GEMMs and expert-parallelism choices (none chosen: empty, disabled).
  Calculator.prototype.fillPresetGemms = function () {
    var self = this, m = this.presetData();
    this.presetGemm.textContent = "";
    this.ep.textContent = "";
    this.presetGemm.appendChild(el("option", { value: "", text: m ? "choose a GEMM…" : "—" }));
    (m ? m.gemms : []).forEach(function (g, i) {
      var kind = g.kind === "dense" ? "" : " (" + g.kind + ")";
      self.presetGemm.appendChild(el("option", { value: String(i),
        text: g.key + kind + ": " + g.K + " × " + g.N }));
    });
    (m ? m.eps : [1]).forEach(function (ep) {
      self.ep.appendChild(el("option", { value: String(ep), text: String(ep) }));
    });
    this.presetGemm.disabled = !m;
    this.ep.disabled = !m || m.eps.length < 2;  // a dense model takes EP = 1 only
  };

  // gemm_instances' refusal of tokens (checked first), else that of the first GEMM whose
  // routed rows pass the largest dimension, else null.
  Calculator.prototype.tokensProblem = function (m, text) {
    var d = this.data.model_presets, digits = DIGITS.test(text), value = Number(text);
    if (!digits || value < 1 || value > d.max) {  // digits only, as `roofline model --tokens`
      return fill(d.tokens, { value: digits ? String(value) : shown(text) });
    }
    for (var i = 0; i < m.gemms.length; i++) {
      var g = m.gemms[i];
      if (g.routed && value * g.rows > d.max) {
        return fill(g.routed, { tokens: String(value), rows: String(value * g.rows) });
      }
    }
    return null;
  };

  Calculator.prototype.applyPreset = function () {
    var m = this.presetData(), index = this.presetGemm.value;
    this.presetNote.textContent = "";
    this.presetMessage.textContent = "";
    this.tokens.classList.remove("ra-invalid");
    if (!m || index === "") return;
    var problem = this.tokensProblem(m, this.tokens.value.trim());
    if (problem) {
      this.tokens.classList.add("ra-invalid");
      this.presetMessage.appendChild(el("div", { class: "admonition warning",
        "data-kind": "tokens" }, [el("p", { class: "admonition-title", text: "Invalid input" }),
                                  el("p", { text: problem })]));
      return;
    }
    var g = m.gemms[Number(index)], tokens = Number(this.tokens.value.trim());
    var groups = own(m.groups, this.ep.value)[Number(index)];
    this.dims.M.value = String(tokens * g.rows);
    this.dims.K.value = String(g.K);
    this.dims.N.value = String(g.N);
    this.dims.G.value = String(groups);
    this.presetNote.textContent = m.label + ", " + g.key + ": " + (g.kind === "expert" ?
      "routed experts, " + tokens + " tokens × top-" + g.rows + " = " + tokens * g.rows +
        " rows over " + groups + " experts per device" :
      (g.kind === "shared" ? "shared expert, all tokens" : "dense, all tokens")) +
      "; runs " + g.count + "× per step.";
    this.update(true);
  };

  Calculator.prototype.gpuData = function () {
    var name = this.gpu.value;
    return this.data.gpus.filter(function (g) { return g.name === name; })[0];
  };

  Calculator.prototype.placeholders = function () {
    var g = this.gpuData(), self = this;
    this.data.hardware.forEach(function (h) {
      var v = g.hw[h.key];
      // An absent per-path peak takes its fallback key's value (overridden or not).
      var absent = h.fallback ? "as " + h.fallback : (h.default !== null ? "absent (" + h.default + ")" : "absent");
      self.overrides[h.key].placeholder = v === null ? absent : String(+(v / h.scale).toPrecision(12));
    });
  };

  // The CLI's message when text is not a dimension evaluate accepts, else null. G, the
  // group count, has evaluate's own messages ("shape dimension G (groups) ...").
  // Digits only, as the CLI's parse_dim and --groups take them: "1e3", "1024.0" and "+8"
  // are numbers, but not what `roofline eval --shape` accepts, so the page refuses them too.
  Calculator.prototype.dimProblem = function (dim, text) {
    return dimProblem(this.data.shape, dim, text);
  };

  function dimProblem(shape, dim, text) {  // shape: data.js's shape messages and limit
    var digits = DIGITS.test(text), value = Number(text);
    var messages = dim === "G" ? shape.groups : shape;
    var values = { dim: dim, value: digits ? String(value) : shownDim(text) };
    if (!digits || value <= 0) return fill(messages.positive, values);
    return value > shape.max ? fill(messages.too_large, values) : null;
  }

  // roofline.evaluate.check_groups' message when G > M (more experts than tokens), else null.
  function groupsProblem(shape, dims) {
    if (Number(dims.G) <= Number(dims.M)) return null;
    return fill(shape.groups.above_m, { value: dims.G, m: dims.M });
  }

  // Set the form from the query string (then the widget's data-* defaults, then data.js's).
  // Each value that is not valid is reported by showProblems and the default used instead.
  Calculator.prototype.readState = function () {
    var q = new URLSearchParams(window.location.search), d = this.data, host = this.host;
    var self = this, problems = [];
    var report = function (param, text) { problems.push({ param: param, text: text }); };
    var given = function (key) { return q.has(key) && q.get(key).trim() !== ""; };  // "": absent
    var pick = function (key) {  // the widget's data-groups is G's default on its page
      var widget = own(host.dataset, key === "G" ? "groups" : key);
      return String(given(key) ? q.get(key).trim() : (widget || d.defaults[key]));
    };
    var gpu = pick("gpu"), lower = gpu.toLowerCase();
    var match = d.gpus.filter(function (g) {
      return g.name.toLowerCase() === lower || g.slug === lower;
    })[0];
    if (!match) report("gpu", fill(d.unknown.gpu, { name: shown(gpu) }));
    this.gpu.value = match ? match.name : d.defaults.gpu;
    var mode = pick("mode");
    var modeOk = hasOwn.call(d.modes, mode.toLowerCase());
    if (!modeOk) report("mode", fill(d.unknown.mode, { name: shown(mode) }));
    this.mode.value = modeOk ? mode.toLowerCase() : d.defaults.mode;
    var recipe = pick("recipe"), lowered = recipe.toLowerCase();
    var name = own(d.aliases, lowered) || lowered;
    if (own(d.modes, this.mode.value).indexOf(name) < 0) {
      var elsewhere = own(own(d.unknown.recipe_mode, this.mode.value), name);
      var unknownRecipe = own(d.unknown.recipe, this.mode.value);
      report("recipe", fill(elsewhere || unknownRecipe, { name: shown(recipe) }));
    }
    this.fillRecipes(name);
    var fusion = given("fusion") ? q.get("fusion").trim() : "0";
    var fused = own(d.fusion, fusion.toLowerCase());
    if (fused === undefined) report("fusion", fill(d.unknown.fusion, { name: shown(fusion) }));
    this.fusion.checked = fused === true;
    // calibrated: the link's value, else the widget's data-calibrated, else torchao's model.
    var pageDefault = own(d.calibrated, String(own(host.dataset, "calibrated") || d.defaults.calibrated));
    this.calibratedDefault = pageDefault === true;
    var calText = given("calibrated") ? q.get("calibrated").trim() : "";
    var calibrated = calText === "" ? this.calibratedDefault : own(d.calibrated, calText.toLowerCase());
    if (calibrated === undefined) {
      report("calibrated", fill(d.unknown.calibrated, { name: shown(calText) }));
      calibrated = this.calibratedDefault;
    }
    this.calibrated.checked = calibrated === true;
    ["M", "K", "N", "G"].forEach(function (dim) {
      var text = pick(dim), problem = self.dimProblem(dim, text);
      if (problem) report(dim, problem);
      // A refused G falls back to the widget's own (data-groups), as calibrated does.
      var fallback = dim === "G" ? own(host.dataset, "groups") || d.defaults.G : d.defaults[dim];
      self.dims[dim].value = problem ? String(fallback) : text;
    });
    d.hardware.forEach(function (h) {  // overrides are SI in the query string
      if (!given(h.key)) return;
      var got = overrideValue(h, q.get(h.key).trim(), 1, h.si_unit);
      if (got.error) { report(h.key, got.error); return; }
      self.overrides[h.key].value = String(+(got.value / h.scale).toPrecision(15));
      self.overrideBox.open = true;
    });
    this.placeholders();
    this.showProblems(problems);
  };

  // The link's rejected values, one paragraph each (textContent only: they echo the link).
  Calculator.prototype.showProblems = function (problems) {
    if (this.alert) this.alert.remove();
    this.alert = null;
    if (!problems.length) return;
    var title = problems.length === 1 ? "A value in the link was ignored; the default is used" :
      problems.length + " values in the link were ignored; the defaults are used";
    this.alert = el("div", { class: "admonition warning ra-calc-error", role: "alert",
                             "data-role": "message", "data-kind": "query" },
      [el("p", { class: "admonition-title", text: title })].concat(problems.map(function (p) {
        return el("p", { "data-param": p.param, text: p.text });
      })));
    this.host.insertBefore(this.alert, this.status);
  };

  Calculator.prototype.writeState = function (hw) {
    var q = new URLSearchParams(), self = this;
    q.set("gpu", this.gpu.value);
    q.set("mode", this.mode.value);
    q.set("recipe", this.recipe.value);
    ["M", "K", "N"].forEach(function (dim) { q.set(dim, self.dims[dim].value.trim()); });
    var groups = this.dims.G.value.trim();
    // Left out for a dense layer (the default), unless this widget starts grouped.
    if (groups !== "1" || own(this.host.dataset, "groups")) q.set("G", groups);
    q.set("fusion", this.fusion.checked ? "1" : "0");
    // Left out for torchao's model (the default), unless this widget starts calibrated.
    if (this.calibrated.checked || this.calibratedDefault) {
      q.set("calibrated", this.calibrated.checked ? "1" : "0");
    }
    Object.keys(hw.overridden).forEach(function (k) { q.set(k, String(hw.overridden[k])); });
    var url = window.location.pathname + "?" + q.toString() + window.location.hash;
    window.history.replaceState(null, "", url);
  };

  Calculator.prototype.hardware = function () {
    var g = this.gpuData(), hw = {}, overridden = {}, errors = [], self = this;
    this.data.hardware.forEach(function (h) {
      hw[h.key] = g.hw[h.key];
      var text = self.overrides[h.key].value.trim();
      self.overrides[h.key].classList.remove("ra-invalid");
      if (text === "") return;
      var got = overrideValue(h, text, h.scale, h.si_unit && h.unit);  // the display unit
      if (got.error) {
        self.overrides[h.key].classList.add("ra-invalid");
        errors.push(got.error);
        return;
      }
      hw[h.key] = got.value;
      overridden[h.key] = hw[h.key];
    });
    finishHardware(this.data, g, hw);
    return { values: hw, overridden: overridden, errors: errors };
  };

  function finishHardware(d, g, hw) {
    // GpuSpec.value's fallback, after the overrides: without its own figure, the
    // block-scaled fp8 peak follows fp8_peak_tops, overridden or not.
    d.hardware.forEach(function (h) {
      if (h.fallback && (hw[h.key] === null || hw[h.key] === undefined)) hw[h.key] = hw[h.fallback];
      // and a figure with a default that changes nothing (sm_count: 1e12, no waves)
      if (h.default !== null && (hw[h.key] === null || hw[h.key] === undefined)) hw[h.key] = h.default;
    });
    // Then GpuSpec.value's clock: a card that holds a higher clock than its printed peaks
    // assume (sustained_clock_mhz) runs every peak at sustained / peak clock.
    d.hardware.forEach(function (h) {
      if (h.clocked && hw[h.key] !== null && hw[h.key] !== undefined) hw[h.key] *= g.clock_scale;
    });
    return hw;
  }

  // The checks of roofline.evaluate.evaluate, in its order, with the CLI's messages.
  Calculator.prototype.check = function (key, hw, dims) {
    var d = this.data, gpu = this.gpu.value;
    var needs = own(d.needs, key) || [];
    for (var i = 0; i < needs.length; i++) {
      var v = own(hw, needs[i]);
      if (v === null || v === undefined) {
        return { kind: "impossible", text: fill(own(d.missing, key)[needs[i]], { gpu: gpu }) };
      }
    }
    var names = ["M", "K", "N", "G"];  // evaluate's order: the shape, then the groups
    for (var j = 0; j < names.length; j++) {
      var problem = this.dimProblem(names[j], dims[names[j]]);
      if (problem) return { kind: "shape", text: problem };
    }
    var above = groupsProblem(d.shape, dims);
    if (above) return { kind: "shape", text: above };
    var rules = own(d.shape.divisible, this.recipe.value) || [];
    for (var r = 0; r < rules.length; r++) {
      var value = Number(dims[rules[r][0]]);
      if (value % rules[r][1] !== 0) return { kind: "shape", text: fill(rules[r][2], { value: value }) };
    }
    return null;
  };

  Calculator.prototype.update = function (write) {
    var d = this.data, self = this;
    var mode = this.mode.value, recipe = this.recipe.value, fusion = this.fusion.checked;
    var key = mode + "/" + recipe + "/" + (fusion ? 1 : 0);
    var hw = this.hardware();
    var dims = {};
    ["M", "K", "N", "G"].forEach(function (dim) { dims[dim] = self.dims[dim].value.trim(); });
    if (write) {
      this.writeState(hw);
      this.showProblems([]);  // the link is rewritten from the form: its old problems are gone
    }
    var calibrated = this.calibrated.checked;
    var G = Number(dims.G), grouped = DIGITS.test(dims.G) && G !== 1;
    var cmd = 'roofline eval --gpu "' + this.gpu.value + '" --mode ' + mode + " --recipe " + recipe +
      " --shape " + dims.M + "," + dims.K + "," + dims.N + (grouped ? " --groups " + dims.G : "") +
      (fusion ? " --fusion" : "") + (calibrated ? " --calibrated" : "");
    this.command.textContent = cmd;
    this.results.textContent = "";
    this.status.textContent = "";
    var problem = hw.errors.length ? { kind: "override", text: hw.errors[0] } :
      this.check(mode + "/" + recipe, hw.values, dims);
    if (problem) {
      this.status.appendChild(el("div", {
        class: "admonition " + (problem.kind === "impossible" ? "failure" : "warning"),
        "data-role": "message", "data-kind": problem.kind
      }, [el("p", { class: "admonition-title", text: problem.kind === "impossible" ?
        "Not computable" : "Invalid input" }), el("p", { text: problem.text })]));
      return;
    }
    // A grouped layer's verdict also asks for a grouped GEMM kernel (listed where it differs).
    var gpuData = this.gpuData();
    var verdict = (grouped && own(gpuData.capability_grouped, mode + "/" + recipe)) ||
      own(gpuData.capability, mode + "/" + recipe);
    // Admonition kind and title per capability state (roofline.capability.Support).
    var look = { native: ["success", "Native"], emulated: ["info", "Emulated: bf16 GEMMs"] };
    var kind = own(look, verdict[0]) || ["warning", "Hypothetical estimate"];
    var badge = el("div", { class: "admonition " + kind[0],
                            "data-role": "support", "data-support": verdict[0] },
                   [el("p", { class: "admonition-title", text: kind[1] }),
                    el("p", { text: verdict[1] })]);
    this.status.appendChild(badge);
    if (Object.keys(hw.overridden).length) {
      this.status.appendChild(el("p", { class: "ra-calc-note", text: "With your overrides of " +
        Object.keys(hw.overridden).join(", ") + " (not the published spec)." }));
    }
    var M = Number(dims.M), K = Number(dims.K), N = Number(dims.N);
    if (calibrated) this.calibrationNotes(key, hw.overridden, grouped, M * K * N);
    var torchao = evaluateColumns(key, mode, M, K, N, hw.values, null, G);
    var result = calibrated ?
      evaluateColumns(key, mode, M, K, N, hw.values, gpuData.cal, G) : torchao;
    var unbounded = [result, torchao].some(function (r) {
      return Object.keys(r.columns).some(function (c) { return !isFinite(r.columns[c]); });
    });
    if (unbounded) {  // never "NaN×" or "Infinity": say which inputs made it so
      this.status.appendChild(el("div", { class: "admonition warning", "data-role": "message",
        "data-kind": "override" }, [el("p", { class: "admonition-title", text: "Invalid input" }),
        el("p", { text: "These figures give a time that is not a finite number; check the " +
          "overrides (a fraction or peak near 0 divides to infinity)." })]));
      return;
    }
    this.render(result, mode, hw.values, torchao);
  };

  // What the calibrated model does not take from the form: overrides of the figures it
  // replaces with its own, and the parameters that are assumed (no measurement) for this GPU.
  Calculator.prototype.calibrationNotes = function (key, overridden, grouped, mkn) {
    var entry = own(window.RooflineModels.models, key);
    var ignores = (grouped ? entry.grouped : entry).calibrated.ignores;
    var unused = Object.keys(overridden).filter(function (k) { return ignores.indexOf(k) >= 0; });
    if (unused.length) {
      this.status.appendChild(el("p", { class: "ra-calc-note", "data-role": "calibration-ignores",
        text: unused.join(", ") + (unused.length === 1 ? " does" : " do") + " not enter the " +
          "calibrated model (it uses its own efficiencies and fixed latencies); it changes " +
          "only torchao's speedup shown beside it." }));
    }
    var band = this.band(key, grouped, mkn);
    this.status.appendChild(el("p", { class: "ra-calc-note", "data-role": "calibration-band",
      "data-basis": band.basis, "data-band": String(band.fraction),
      text: "Cross-validated error band of the calibrated speedup: ±" +
        Math.round(band.fraction * 100) + "% (" + (band.basis === "measured" ? "" :
        "a parameter not measured on this GPU; ") + band.of + " CV" +
        (band.size ? " at " + band.size : "") + ")." }));
    var assumed = this.gpuData().cal_assumed;
    if (assumed.length) {
      this.status.appendChild(el("p", { class: "ra-calc-note", "data-role": "calibration-assumed",
        text: "No public measurement for " + this.gpu.value + " gives " + assumed.join(", ") +
          ": the calibrated model uses stated fallbacks for them, so its numbers are less certain." }));
    }
  };

  // roofline.error_bands.model_band: the weakest level among the per-GPU parameters the
  // calibrated model uses sets the basis; the GPU's bands give its fraction.
  Calculator.prototype.band = function (key, grouped, mkn) {
    return bandOf(this.gpuData(), key, grouped, mkn);
  };

  // mkn: the shape's M x K x N; the band is that of the CV points of its size bucket
  // (each entry: [upper limit or null, fraction, whose CV error, size bucket or null]).
  function bandOf(g, key, grouped, mkn) {
    var entry = own(window.RooflineModels.models, key);
    var keys = (grouped ? entry.grouped : entry).calibrated.band_keys;
    var order = ["gpu", "family", "global"], worst = 0;
    keys.forEach(function (k) { worst = Math.max(worst, order.indexOf(g.cal_levels[k])); });
    var basis = ["measured", "family", "global"][worst], sizes = g.bands[basis];
    var band = sizes.filter(function (b) { return b[0] === null || mkn < b[0]; })[0];
    return { basis: basis, fraction: band[1], of: band[2], size: band[3] };
  }

  // torchao: torchao's result, shown beside the calibrated one (result.calibrated).
  Calculator.prototype.render = function (result, mode, hw, torchao) {
    var cols = result.columns, spec = window.RooflineModels.columns.columns[mode];
    var speed = cols.r_fp8_gemm_and_ovhd_spdp;
    var cards = [
      card(result.calibrated ? "speedup over bf16, calibrated model" : "speedup over bf16",
           fmtValue("r_fp8_gemm_and_ovhd_spdp", speed), speed >= 1 ? "ra-good" : "ra-bad"),
      card("bf16 time", fmtSeconds(cols.r_bf16_gemm_s + (cols.r_bf16_ovhd_s || 0)), ""),
      card("low-precision time", fmtSeconds(cols.r_fp8_gemm_and_ovhd_s), "")
    ];
    if (result.calibrated) {
      var theirs = torchao.columns.r_fp8_gemm_and_ovhd_spdp;
      var beside = card("torchao model speedup", fmtValue("r_fp8_gemm_and_ovhd_spdp", theirs), "");
      beside.setAttribute("data-role", "torchao-speedup");
      beside.setAttribute("data-value", String(theirs));
      cards.splice(1, 0, beside);
    }
    var headline = el("div", { class: "ra-calc-cards" }, cards);
    var which = el("p", { class: "ra-calc-note", "data-role": "model",
      "data-model": result.calibrated ? "calibrated" : "torchao",
      text: result.calibrated ? "Computed with the calibrated model (efficiencies and fixed " +
        "latencies fitted on public measurements); torchao's roofline model beside it." :
        "Computed with torchao's roofline model (tick the calibrated model to compare)." });
    var layer = el("p", { class: "ra-calc-note", "data-role": "layer",
      "data-groups": String(result.groups),
      text: result.groups === 1 ? "A dense layer (G = 1)." : "A grouped (mixture-of-experts) " +
        "layer: M = " + cols.fwd_M + " tokens in all, split evenly over G = " + result.groups +
        " experts, weights G × K × N; block-scaled recipes also rearrange their scales " +
        "into the grouped GEMM's layout." });
    var table = el("table", { class: "ra-calc-columns" }, [
      el("thead", {}, [el("tr", {}, [el("th", { text: "column" }), el("th", { text: "meaning" }),
                                     el("th", { text: "value" })])]),
      el("tbody", {}, spec.map(function (c) {
        return el("tr", {}, [el("td", {}, [el("code", { text: c })]),
          el("td", { text: COLUMN_LABELS[c] || "" }),
          el("td", { class: "ra-num", "data-column": c, "data-value": String(cols[c]),
                     title: String(cols[c]), text: fmtValue(c, cols[c]) })]);
      }))
    ]);
    var rows = result.terms.map(function (t) {
      var total = result.times[t.key], bound = "";
      var compute = "", memory = "";
      // The calibrated model adds a fixed latency (#latency) where torchao takes a floor.
      var fixed = result.calibrated ? result.times[t.key + "#latency"] : null;
      if (t.gemm) {
        var c = result.times[t.key + "#compute"], m = result.times[t.key + "#memory"];
        compute = el("td", { class: "ra-num", "data-term": t.key + "#compute", "data-value": String(c), text: fmtSeconds(c) });
        memory = el("td", { class: "ra-num", "data-term": t.key + "#memory", "data-value": String(m), text: fmtSeconds(m) });
        if (fixed !== null) bound = fixed >= Math.max(c, m) ? "latency" : (c >= m ? "compute" : "memory");
        else bound = c >= m && c >= hw.kernel_launch_overhead_s ? "compute" :
          (m >= hw.kernel_launch_overhead_s ? "memory" : "launch");
      } else if (fixed !== null) {  // a kernel the recipe fuses away takes 0: no bound
        bound = total === 0 ? "none" : (fixed >= total - fixed ? "latency" : "memory");
      } else {
        bound = total > hw.kernel_launch_overhead_s ? "memory" : "launch";
      }
      return el("tr", { class: t.quantity.indexOf("bf16") === 0 ? "ra-baseline" : "" }, [
        el("td", { text: t.label }),
        el("td", { text: t.quantity.indexOf("bf16") === 0 ? "bf16 baseline" : "low precision" }),
        el("td", { class: "ra-num", "data-term": t.key, "data-value": String(total), text: fmtSeconds(total) }),
        compute || el("td", { class: "ra-num", text: "—" }), memory || el("td", { class: "ra-num", text: "—" }),
        el("td", {}, [el("span", { class: "ra-bound ra-bound-" + (bound === "latency" ? "launch" : bound),
                                   "data-bound": bound,
                                   text: bound === "none" ? "no kernel" : bound + "-bound" })])
      ]);
    });
    var breakdown = el("table", { class: "ra-calc-breakdown" }, [
      el("thead", {}, [el("tr", {}, ["GEMM or kernel", "side", "time", "compute", "memory", "bound"]
        .map(function (h) { return el("th", { text: h }); }))]),
      el("tbody", {}, rows)
    ]);
    this.results.appendChild(headline);  // the answer first, then what it was computed with
    this.results.appendChild(which);
    this.results.appendChild(layer);
    this.results.appendChild(el("h3", { text: "Columns (as roofline eval prints them)" }));
    this.results.appendChild(el("div", { class: "md-typeset__table" }, [table]));
    this.results.appendChild(el("h3", { text: "Per-kernel breakdown" }));
    this.results.appendChild(el("div", { class: "md-typeset__table" }, [breakdown]));
  };

  function card(label, value, cls) {
    return el("div", { class: "ra-calc-card " + cls }, [
      el("div", { class: "ra-calc-card-label", text: label }),
      el("div", { class: "ra-calc-card-value", text: value })
    ]);
  }

  // -- the home page's picker: the best native recipe for a GPU, mode and shape ----------
  // Every recipe native on the GPU in that mode (roofline.guidance: only native recipes
  // compete for best), timed by the calibrated model (unfused, dense) as the calculator
  // does with calibrated=1; the answer is the largest speedup, with its CV error band.

  function BestPicker(host) {
    this.host = host;
    this.data = window.RooflineCalculatorData;
    this.build();
    this.update();
  }

  BestPicker.prototype.build = function () {
    var self = this, d = this.data, host = this.host;
    host.textContent = "";
    this.gpu = el("select", { name: "gpu", "aria-label": "GPU" });
    d.gpus.forEach(function (g) { self.gpu.appendChild(el("option", { value: g.name, text: g.name })); });
    this.gpu.value = d.defaults.gpu;
    this.mode = el("select", { name: "mode", "aria-label": "mode" });
    Object.keys(d.modes).forEach(function (m) { self.mode.appendChild(el("option", { value: m, text: m })); });
    this.mode.value = d.defaults.mode;
    this.dims = {};
    var fields = [this.labelled("GPU", this.gpu, "ra-best-gpu"), this.labelled("Mode", this.mode)];
    ["M", "K", "N"].forEach(function (dim) {
      self.dims[dim] = el("input", { type: "text", inputmode: "numeric", name: dim, autocomplete: "off",
                                     spellcheck: "false", value: String(d.defaults[dim]) });
      fields.push(self.labelled(dim, self.dims[dim]));
    });
    this.answer = el("div", { class: "ra-best-answer", role: "status", "data-role": "best" });
    this.link = el("a", { class: "ra-best-link", text: "Open this in the calculator →" });
    host.appendChild(el("form", { class: "ra-best-form", autocomplete: "off" }, fields));
    host.appendChild(this.answer);
    host.appendChild(el("p", { class: "ra-calc-note" }, [this.link]));
    var onChange = function () { self.update(); };
    [this.gpu, this.mode].forEach(function (x) { x.addEventListener("change", onChange); });
    Object.keys(this.dims).forEach(function (k) { self.dims[k].addEventListener("input", onChange); });
  };

  BestPicker.prototype.labelled = function (label, input, cls) {
    return el("label", { class: "ra-best-field" + (cls ? " " + cls : "") },
              [el("span", { class: "ra-calc-label", text: label }), input]);
  };

  // Every native recipe's calibrated speedup at the shape, best first; a message instead
  // when the shape is not one the CLI takes.
  BestPicker.prototype.ranking = function (mode, dims) {
    var d = this.data, gpu = this.gpu.value;
    var g = d.gpus.filter(function (x) { return x.name === gpu; })[0];
    for (var i = 0; i < 3; i++) {
      var problem = dimProblem(d.shape, ["M", "K", "N"][i], dims[["M", "K", "N"][i]]);
      if (problem) return { problem: problem };
    }
    var hw = finishHardware(d, g, Object.assign({}, g.hw));
    var M = Number(dims.M), K = Number(dims.K), N = Number(dims.N), rows = [];
    (own(d.modes, mode) || []).forEach(function (recipe) {
      var verdict = own(g.capability, mode + "/" + recipe);
      if (!verdict || verdict[0] !== "native") return;
      var needs = own(d.needs, mode + "/" + recipe) || [];
      if (needs.some(function (k) { return hw[k] === null || hw[k] === undefined; })) return;
      var rules = own(d.shape.divisible, recipe) || [];
      var fits = rules.every(function (r) { return Number(dims[r[0]]) % r[1] === 0; });
      if (!fits) return;
      var key = mode + "/" + recipe + "/0";
      var speed = evaluateColumns(key, mode, M, K, N, hw, g.cal).columns.r_fp8_gemm_and_ovhd_spdp;
      if (isFinite(speed)) rows.push({ recipe: recipe, speedup: speed, band: bandOf(g, key, false, M * K * N) });
    });
    rows.sort(function (a, b) { return b.speedup - a.speedup; });
    return { rows: rows, gpu: g };
  };

  BestPicker.prototype.update = function () {
    var self = this, mode = this.mode.value, dims = {};
    ["M", "K", "N"].forEach(function (k) { dims[k] = self.dims[k].value.trim(); });
    var q = new URLSearchParams({ gpu: this.gpu.value, mode: mode, M: dims.M, K: dims.K,
                                  N: dims.N, calibrated: "1" });
    var ranked = this.ranking(mode, dims);
    this.answer.textContent = "";
    if (ranked.problem) {
      this.answer.appendChild(el("p", { "data-role": "message", text: ranked.problem }));
      this.link.href = (this.host.dataset.root || "./") + "calculator/?" + q.toString();
      return;
    }
    var best = ranked.rows[0];
    if (best) q.set("recipe", best.recipe);
    this.link.href = (this.host.dataset.root || "./") + "calculator/?" + q.toString();
    if (!best) {
      this.answer.appendChild(el("p", { text: "No low-precision recipe runs natively on " +
        this.gpu.value + " in " + mode + " at this shape: stay in bf16." }));
      return;
    }
    var wins = best.speedup > 1;
    var band = "±" + Math.round(best.band.fraction * 100) + "%";
    this.answer.appendChild(el("p", { class: "ra-best-headline" }, [
      el("span", { class: "ra-best-label", text: wins ? "Best recipe" : "Fastest recipe" }),
      el("strong", { "data-role": "best-recipe", text: best.recipe }),
      el("span", { class: "ra-best-speedup" + (wins ? " ra-good" : " ra-bad"), "data-role": "best-speedup",
                   "data-value": String(best.speedup), text: best.speedup.toFixed(2) + "×" }),
      el("span", { class: "ra-best-band", "data-role": "best-band", "data-band": String(best.band.fraction),
                   "data-basis": best.band.basis,
                   text: band + (best.band.basis === "measured" ? "" : " (a parameter not measured on this GPU)") })
    ]));
    var rest = ranked.rows.slice(1, 4).map(function (r) { return r.recipe + " " + r.speedup.toFixed(2) + "×"; });
    this.answer.appendChild(el("p", { class: "ra-calc-note", text: (wins ? "" :
      "No recipe beats bf16 here: stay in bf16. ") + "Speedup over bf16 for one linear layer, " +
      "calibrated model, ± its cross-validated error band." + (rest.length ? " Next: " + rest.join(", ") + "." : "") }));
  };

  function start() {
    var hosts = document.querySelectorAll(".ra-calc:not([data-ready]), .ra-best:not([data-ready])");
    if (!hosts.length) return;
    var root = hosts[0].dataset.root || "./";
    loadAll(root).then(function () {
      hosts.forEach(function (host) {
        host.setAttribute("data-ready", "1");
        if (host.classList.contains("ra-best")) host.picker = new BestPicker(host);
        else host.calculator = new Calculator(host);
      });
    }).catch(function (err) {
      hosts.forEach(function (host) { host.textContent = "The calculator could not load: " + err.message; });
      console.error("Roofline Atlas: " + err.message);
    });
  }

  // pyRepr, fmtG and the input checks are exposed for the tests that compare them with
  // Python's (tests/test_hostile_findings.py runs them in node).
  window.RooflineCalculator = { evaluateColumns: evaluateColumns, pyRepr: pyRepr, fmtG: fmtG,
                                dimProblem: dimProblem, groupsProblem: groupsProblem,
                                inRange: inRange };
  if (typeof document$ !== "undefined") document$.subscribe(start);
  else document.addEventListener("DOMContentLoaded", start);
})();
