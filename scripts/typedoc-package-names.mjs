// TypeDoc plugin (typedoc.json): names each entry point's module after its package, `@syncopate/core`
// rather than the path TypeDoc derives from the entry point (`core/src`).
import { Converter, ReflectionKind } from 'typedoc';

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getReflectionsByKind(ReflectionKind.Module)) {
      const match = /^([a-z-]+)\/src$/.exec(module.name);
      if (match) module.name = `@syncopate/${match[1]}`;
    }
  });
}
