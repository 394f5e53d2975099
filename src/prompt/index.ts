/**
 * `tool-lessons/prompt`: what the model sees, each rendered in one place. A tool's description
 * with what it learned (`modelDescription`, `withDescriptions`), the pinned
 * rules block, the tool-memory block and the lessons block with its token budget.
 */
export { modelDescription, withDescriptions } from "./describe.js";
export { renderRulesBlock, type RulesBlock, type RulesBlockOptions } from "./rules-block.js";
export {
  MEMORY_HEADING,
  renderGuideline,
  renderMemoryBlock,
  renderStatsBlock,
  type ToolGuidelineEntry,
} from "./memory.js";
export {
  type BlockRule,
  CUT_ORDER,
  type CutStep,
  DEFAULT_LESSONS_BLOCK,
  estimateTokens,
  type LessonsBlock,
  type LessonsBlockInput,
  type LessonsBlockOptions,
  renderLessonsBlock,
} from "./lessons-block.js";
