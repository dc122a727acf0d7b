// jpeg-lossless-decoder-js names release/lossless.d.ts in its package.json but does not ship it: the little we use.
declare module "jpeg-lossless-decoder-js" {
  export class Decoder {
    xDim: number;
    yDim: number;
    numComp: number;
    decode(buffer?: ArrayBuffer, offset?: number, length?: number, numBytes?: number): Uint8Array | Uint16Array;
  }
}
