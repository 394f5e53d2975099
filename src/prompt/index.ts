/**
 * `tool-lessons/prompt`: what the model sees, each rendered in one place. A tool's description
 * with what it learned (`modelDescription`, `withDescriptions`), the pinned
 * rules block, the tool-memory block and the lessons block with its token budget.
 */
export { modelDescription, withDescriptions } from "./describe.js";
export { renderRulesBlock, type RulesBlock, type RulesBlockOptions } from "./rules-block.js";
export { renderMemoryBlock, type ToolGuidelineEntry } from "./memory.js";
export {
  type BlockRule,
  type CutStep,
  type LessonsBlock,
  type LessonsBlockInput,
  type LessonsBlockOptions,
  renderLessonsBlock,
} from "./lessons-block.js";
