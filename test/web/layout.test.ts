import { describe, expect, it } from 'vitest';
import { logIn, newPage, useWebServer } from '../support/browser.js';

/**
 * The frame of every project page: each section of the top bar is on screen at the widths people use,
 * not scrolled out of sight (the bar once scrolled sideways with its scroll bar hidden, so at 1,400 px
 * and under Settings could not be seen).
 */

const server = useWebServer();

describe('web application: the top bar', () => {
  it('shows every section link inside the window at 1,920, 1,400, 1,280 and 1,024 px', async () => {
    const s = server();
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/traces`);
    for (const width of [1920, 1400, 1280, 1024]) {
      await page.setViewportSize({ width, height: 860 });
      const links = page.getByRole('navigation', { name: 'Sections' }).getByRole('link');
      await links.first().waitFor();
      const names = await links.allTextContents();
      expect(names).toContain('Settings');
      for (const name of names) {
        const link = links.filter({ hasText: name }).first();
        const box = await link.boundingBox();
        expect(box, `${name} at ${width} px`).not.toBeNull();
        expect(box!.x, `${name} at ${width} px`).toBeGreaterThanOrEqual(0);
        expect(box!.x + box!.width, `${name} at ${width} px`).toBeLessThanOrEqual(width);
        // Nothing covers it and no ancestor clips it: the point at its middle is the link itself.
        const hit = await page.evaluate(
          ([x, y]) => document.elementFromPoint(x!, y!)?.closest('a')?.textContent ?? null,
          [box!.x + box!.width / 2, box!.y + box!.height / 2],
        );
        expect(hit, `${name} at ${width} px`).toBe(name);
      }
    }
    await context.close();
  });
});
