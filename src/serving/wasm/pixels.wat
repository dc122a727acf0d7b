;; Pillow's convolution resampling passes (libImaging/Resample.c, 8-bit bands) in WebAssembly with SIMD, and
;; the normalisation to float32 that follows them.
;; The resampling: the same fixed-point sums as the JavaScript reference in test/oracles/resample-js.ts
;; (serving runs only these; bench/serve/wasm-vs-js.ts times both). Compiled to pixels.wasm.ts by
;; scripts/build-wasm.mjs; pixels-wasm.ts lays out the memory and calls these.
;;
;; Every pass reads coefficients precomputed in JavaScript: bounds = (first tap, tap count) per output
;; position as i32 pairs, kk = ksize i32 weights per output position (22-bit fixed point).
;; Sums start at 1 << 21 (rounding), the result is sum >> 22 clamped to 0..255: the saturating narrows
;; (i32 -> i16 signed, i16 -> u8 unsigned) do the clamp, exactly as Pillow's clip8.
;; Vector loads and stores may touch up to 16 bytes past a buffer's end: the caller leaves that much room.
(module
  (memory (export "memory") 1)

  ;; Horizontal pass, 3 interleaved bands: src [h][w][3] -> dst [h][outW][3].
  ;; One output pixel per step: the 3 bands (and one byte of the next pixel, ignored) ride in one i32x4.
  (func (export "h3") (param $src i32) (param $w i32) (param $h i32) (param $outW i32)
                      (param $bounds i32) (param $kk i32) (param $ksize i32) (param $dst i32)
    (local $y i32) (local $xx i32) (local $row i32) (local $p i32) (local $n i32) (local $kp i32)
    (local $t i32) (local $o i32) (local $acc v128) (local $b i32)
    (local.set $o (local.get $dst))
    (local.set $y (i32.const 0))
    (block $rows_done
      (loop $rows
        (br_if $rows_done (i32.ge_u (local.get $y) (local.get $h)))
        (local.set $row (i32.add (local.get $src) (i32.mul (local.get $y) (i32.mul (local.get $w) (i32.const 3)))))
        (local.set $xx (i32.const 0))
        (local.set $b (local.get $bounds))
        (local.set $kp (local.get $kk))
        (block $cols_done
          (loop $cols
            (br_if $cols_done (i32.ge_u (local.get $xx) (local.get $outW)))
            (local.set $p (i32.add (local.get $row) (i32.mul (i32.load (local.get $b)) (i32.const 3))))
            (local.set $n (i32.load offset=4 (local.get $b)))
            (local.set $acc (i32x4.splat (i32.const 2097152)))
            (local.set $t (i32.const 0))
            (block $taps_done
              (loop $taps
                (br_if $taps_done (i32.ge_u (local.get $t) (local.get $n)))
                (local.set $acc
                  (i32x4.add (local.get $acc)
                    (i32x4.mul
                      (i32x4.extend_low_i16x8_u (i16x8.extend_low_i8x16_u (v128.load32_zero (local.get $p))))
                      (i32x4.splat (i32.load (i32.add (local.get $kp) (i32.shl (local.get $t) (i32.const 2))))))))
                (local.set $p (i32.add (local.get $p) (i32.const 3)))
                (local.set $t (i32.add (local.get $t) (i32.const 1)))
                (br $taps)))
            (local.set $acc (i32x4.shr_s (local.get $acc) (i32.const 22)))
            (local.set $acc (i16x8.narrow_i32x4_s (local.get $acc) (local.get $acc)))
            (local.set $acc (i8x16.narrow_i16x8_u (local.get $acc) (local.get $acc)))
            ;; 4 bytes written; the 4th lands on the next pixel's first band, written after this.
            (v128.store32_lane 0 (local.get $o) (local.get $acc))
            (local.set $o (i32.add (local.get $o) (i32.const 3)))
            (local.set $b (i32.add (local.get $b) (i32.const 8)))
            (local.set $kp (i32.add (local.get $kp) (i32.shl (local.get $ksize) (i32.const 2))))
            (local.set $xx (i32.add (local.get $xx) (i32.const 1)))
            (br $cols)))
        (local.set $y (i32.add (local.get $y) (i32.const 1)))
        (br $rows))))

  ;; Horizontal pass, 1 band: src [h][w] -> dst [h][outW]. Scalar (grey models are the small ones).
  (func (export "h1") (param $src i32) (param $w i32) (param $h i32) (param $outW i32)
                      (param $bounds i32) (param $kk i32) (param $ksize i32) (param $dst i32)
    (local $y i32) (local $xx i32) (local $row i32) (local $p i32) (local $n i32) (local $kp i32)
    (local $t i32) (local $o i32) (local $s i32) (local $b i32)
    (local.set $o (local.get $dst))
    (local.set $y (i32.const 0))
    (block $rows_done
      (loop $rows
        (br_if $rows_done (i32.ge_u (local.get $y) (local.get $h)))
        (local.set $row (i32.add (local.get $src) (i32.mul (local.get $y) (local.get $w))))
        (local.set $xx (i32.const 0))
        (local.set $b (local.get $bounds))
        (local.set $kp (local.get $kk))
        (block $cols_done
          (loop $cols
            (br_if $cols_done (i32.ge_u (local.get $xx) (local.get $outW)))
            (local.set $p (i32.add (local.get $row) (i32.load (local.get $b))))
            (local.set $n (i32.load offset=4 (local.get $b)))
            (local.set $s (i32.const 2097152))
            (local.set $t (i32.const 0))
            (block $taps_done
              (loop $taps
                (br_if $taps_done (i32.ge_u (local.get $t) (local.get $n)))
                (local.set $s (i32.add (local.get $s)
                  (i32.mul (i32.load8_u (i32.add (local.get $p) (local.get $t)))
                           (i32.load (i32.add (local.get $kp) (i32.shl (local.get $t) (i32.const 2)))))))
                (local.set $t (i32.add (local.get $t) (i32.const 1)))
                (br $taps)))
            (local.set $s (i32.shr_s (local.get $s) (i32.const 22)))
            (i32.store8 (local.get $o)
              (select (i32.const 0)
                (select (i32.const 255) (local.get $s) (i32.gt_s (local.get $s) (i32.const 255)))
                (i32.lt_s (local.get $s) (i32.const 0))))
            (local.set $o (i32.add (local.get $o) (i32.const 1)))
            (local.set $b (i32.add (local.get $b) (i32.const 8)))
            (local.set $kp (i32.add (local.get $kp) (i32.shl (local.get $ksize) (i32.const 2))))
            (local.set $xx (i32.add (local.get $xx) (i32.const 1)))
            (br $cols)))
        (local.set $y (i32.add (local.get $y) (i32.const 1)))
        (br $rows))))

  ;; Vertical pass over rows of `stride` bytes (any band count): src [h][stride] -> dst [outH][stride].
  ;; Each output row accumulates its source rows tap by tap into acc (stride i32, 8 values per step), in the
  ;; order Pillow adds them, then narrows to bytes. Steps past `stride` compute junk that lands in the next
  ;; row's bytes (written after) or in the room past the end.
  (func (export "v") (param $src i32) (param $stride i32) (param $outH i32)
                     (param $bounds i32) (param $kk i32) (param $ksize i32) (param $dst i32) (param $acc i32)
    (local $yy i32) (local $t i32) (local $n i32) (local $r i32) (local $i i32) (local $k v128)
    (local $a i32) (local $px v128) (local $o i32) (local $lo v128) (local $hi v128) (local $kp i32)
    (local.set $yy (i32.const 0))
    (block $rows_done
      (loop $rows
        (br_if $rows_done (i32.ge_u (local.get $yy) (local.get $outH)))
        ;; acc = 1 << 21
        (local.set $i (i32.const 0))
        (block $init_done
          (loop $init
            (br_if $init_done (i32.ge_u (local.get $i) (local.get $stride)))
            (local.set $a (i32.add (local.get $acc) (i32.shl (local.get $i) (i32.const 2))))
            (v128.store (local.get $a) (i32x4.splat (i32.const 2097152)))
            (v128.store offset=16 (local.get $a) (i32x4.splat (i32.const 2097152)))
            (local.set $i (i32.add (local.get $i) (i32.const 8)))
            (br $init)))
        (local.set $n (i32.load offset=4 (i32.add (local.get $bounds) (i32.shl (local.get $yy) (i32.const 3)))))
        (local.set $r (i32.add (local.get $src)
          (i32.mul (i32.load (i32.add (local.get $bounds) (i32.shl (local.get $yy) (i32.const 3)))) (local.get $stride))))
        (local.set $kp (i32.add (local.get $kk) (i32.shl (i32.mul (local.get $yy) (local.get $ksize)) (i32.const 2))))
        (local.set $t (i32.const 0))
        (block $taps_done
          (loop $taps
            (br_if $taps_done (i32.ge_u (local.get $t) (local.get $n)))
            (local.set $k (i32x4.splat (i32.load (i32.add (local.get $kp) (i32.shl (local.get $t) (i32.const 2))))))
            (local.set $i (i32.const 0))
            (block $cols_done
              (loop $cols
                (br_if $cols_done (i32.ge_u (local.get $i) (local.get $stride)))
                (local.set $px (v128.load8x8_u (i32.add (local.get $r) (local.get $i))))
                (local.set $a (i32.add (local.get $acc) (i32.shl (local.get $i) (i32.const 2))))
                (v128.store (local.get $a)
                  (i32x4.add (v128.load (local.get $a)) (i32x4.mul (i32x4.extend_low_i16x8_u (local.get $px)) (local.get $k))))
                (v128.store offset=16 (local.get $a)
                  (i32x4.add (v128.load offset=16 (local.get $a)) (i32x4.mul (i32x4.extend_high_i16x8_u (local.get $px)) (local.get $k))))
                (local.set $i (i32.add (local.get $i) (i32.const 8)))
                (br $cols)))
            (local.set $r (i32.add (local.get $r) (local.get $stride)))
            (local.set $t (i32.add (local.get $t) (i32.const 1)))
            (br $taps)))
        ;; acc >> 22, clamped, to bytes
        (local.set $o (i32.add (local.get $dst) (i32.mul (local.get $yy) (local.get $stride))))
        (local.set $i (i32.const 0))
        (block $out_done
          (loop $out
            (br_if $out_done (i32.ge_u (local.get $i) (local.get $stride)))
            (local.set $a (i32.add (local.get $acc) (i32.shl (local.get $i) (i32.const 2))))
            (local.set $lo (i32x4.shr_s (v128.load (local.get $a)) (i32.const 22)))
            (local.set $hi (i32x4.shr_s (v128.load offset=16 (local.get $a)) (i32.const 22)))
            (local.set $lo (i16x8.narrow_i32x4_s (local.get $lo) (local.get $hi)))
            (v128.store64_lane 0 (i32.add (local.get $o) (local.get $i)) (i8x16.narrow_i16x8_u (local.get $lo) (local.get $lo)))
            (local.set $i (i32.add (local.get $i) (i32.const 8)))
            (br $out)))
        (local.set $yy (i32.add (local.get $yy) (i32.const 1)))
        (br $rows))))

  ;; Normalisation: uint8 HWC (c bands, plane pixels) -> float32 CHW through a table of 256 values per band
  ;; (lut: c x 256 f32, computed in JavaScript with numpy's float32 arithmetic), so the floats are the table's.
  (func (export "norm") (param $px i32) (param $c i32) (param $plane i32) (param $lut i32) (param $out i32)
    (local $b i32) (local $i i32) (local $p i32) (local $o i32) (local $l i32)
    (local.set $o (local.get $out))
    (local.set $b (i32.const 0))
    (block $bands_done
      (loop $bands
        (br_if $bands_done (i32.ge_u (local.get $b) (local.get $c)))
        (local.set $l (i32.add (local.get $lut) (i32.shl (local.get $b) (i32.const 10))))
        (local.set $p (i32.add (local.get $px) (local.get $b)))
        (local.set $i (i32.const 0))
        (block $px_done
          (loop $pixels
            (br_if $px_done (i32.ge_u (local.get $i) (local.get $plane)))
            (f32.store (local.get $o)
              (f32.load (i32.add (local.get $l) (i32.shl (i32.load8_u (local.get $p)) (i32.const 2)))))
            (local.set $p (i32.add (local.get $p) (local.get $c)))
            (local.set $o (i32.add (local.get $o) (i32.const 4)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $pixels)))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $bands))))
)
