import { Layout, renderPage } from './layout.js';

/** A page that only says something (a run or batch not found), with the way back to the runs. */
export function messagePage({ title, text }: { title: string; text: string }): string {
  return renderPage(
    <Layout title={title}>
      <h1>{title}</h1>
      <p>{text}</p>
      <p>
        <a href="/runs">All runs</a>
      </p>
    </Layout>,
  );
}
