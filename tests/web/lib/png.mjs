/*
 * png.mjs: tests/lib/png.js for the browser tests (ES modules).
 */
import png from '../../lib/png.js';

export const { encodePng, decodePng } = png;
