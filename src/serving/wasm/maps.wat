;; Grad-CAM maps in WebAssembly (SIMD): the two loops of postprocess.ts that touch every one of a map's
;; ~200,000 values, the bilinear blend of camToGradient and the JSON text of GradientMap.writeJson. Same
;; arithmetic as the JavaScript reference in test/oracles/maps-js.ts (f64, truncation, clamp), so the same bytes
;; (serving runs only these; bench/serve/wasm-vs-js.ts times both). Compiled to maps.wasm.ts by
;; scripts/build-wasm.mjs; maps-wasm.ts lays out the memory and calls these.
;; Vector loads and stores may touch up to 16 bytes past a buffer's end: the caller leaves that much room.
(module
  (memory (export "memory") 1)

  ;; One output row of camToGradient: dst[x] = clamp(trunc(top[x] + (bot[x] - top[x]) * dy + 0.5), 0, 255)
  ;; for x < n, top and bot f32 rows, the arithmetic in f64 as JavaScript does it. Four values a step: two
  ;; f64x2 halves, truncated (saturating, as NaN -> 0), then the saturating narrows clamp to 0..255.
  (func (export "blend") (param $top i32) (param $bot i32) (param $dy f64) (param $n i32) (param $dst i32)
    (local $x i32) (local $d v128) (local $half v128) (local $a v128) (local $b v128) (local $lo v128) (local $hi v128)
    (local.set $d (f64x2.splat (local.get $dy)))
    (local.set $half (f64x2.splat (f64.const 0.5)))
    (local.set $x (i32.const 0))
    (block $done
      (loop $step
        (br_if $done (i32.ge_u (local.get $x) (local.get $n)))
        (local.set $a (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $top))))
        (local.set $b (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $bot))))
        (local.set $lo (i32x4.trunc_sat_f64x2_s_zero
          (f64x2.add (f64x2.add (local.get $a) (f64x2.mul (f64x2.sub (local.get $b) (local.get $a)) (local.get $d))) (local.get $half))))
        (local.set $a (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 (local.get $top))))
        (local.set $b (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 (local.get $bot))))
        (local.set $hi (i32x4.trunc_sat_f64x2_s_zero
          (f64x2.add (f64x2.add (local.get $a) (f64x2.mul (f64x2.sub (local.get $b) (local.get $a)) (local.get $d))) (local.get $half))))
        ;; [v0 v1 0 0] [v2 v3 0 0] -> [v0 v1 v2 v3] -> i16 (signed saturating) -> u8 (unsigned saturating)
        (local.set $lo (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $lo) (local.get $hi)))
        (local.set $lo (i16x8.narrow_i32x4_s (local.get $lo) (local.get $lo)))
        (local.set $lo (i8x16.narrow_i16x8_u (local.get $lo) (local.get $lo)))
        (v128.store32_lane 0 (local.get $dst) (local.get $lo))
        (local.set $top (i32.add (local.get $top) (i32.const 16)))
        (local.set $bot (i32.add (local.get $bot) (i32.const 16)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
        (local.set $x (i32.add (local.get $x) (i32.const 4)))
        (br $step))))

  ;; A map's JSON text: src [h][w] bytes -> "[[v,v,...],[...]]" at dst; returns the end offset. w, h >= 1.
  ;; The table at address 0 holds, for each byte value, its decimal digits and a comma as one little-endian
  ;; i32 (256 x 4 bytes), and from 1024 the length of that text (256 bytes): every value is one 4-byte store
  ;; and an advance of 2 to 4, no branch on the digit count. The comma after a row's last value becomes ']'.
  (func (export "json") (param $src i32) (param $w i32) (param $h i32) (param $dst i32) (result i32)
    (local $o i32) (local $y i32) (local $p i32) (local $end i32) (local $v i32)
    (i32.store8 (local.get $dst) (i32.const 0x5b))
    (local.set $o (i32.add (local.get $dst) (i32.const 1)))
    (local.set $p (local.get $src))
    (local.set $y (i32.const 0))
    (loop $rows
      (i32.store8 (local.get $o) (i32.const 0x5b))
      (local.set $o (i32.add (local.get $o) (i32.const 1)))
      (local.set $end (i32.add (local.get $p) (local.get $w)))
      (loop $cols
        (local.set $v (i32.load8_u (local.get $p)))
        (i32.store align=1 (local.get $o) (i32.load (i32.shl (local.get $v) (i32.const 2))))
        (local.set $o (i32.add (local.get $o) (i32.load8_u offset=1024 (local.get $v))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br_if $cols (i32.lt_u (local.get $p) (local.get $end))))
      (i32.store8 (i32.sub (local.get $o) (i32.const 1)) (i32.const 0x5d))
      (i32.store8 (local.get $o) (i32.const 0x2c))
      (local.set $o (i32.add (local.get $o) (i32.const 1)))
      (local.set $y (i32.add (local.get $y) (i32.const 1)))
      (br_if $rows (i32.lt_u (local.get $y) (local.get $h))))
    (i32.store8 (i32.sub (local.get $o) (i32.const 1)) (i32.const 0x5d))
    (local.get $o))
)
